// A given problem field applied to a problem (see given_field.h).
#include "sim/app/catalog/given_field.h"

namespace zb::catalog {

void GivenField::apply(ProblemSpec& spec) const { field->set_from_text(spec, text, "--" + std::string(field->flag)); }

}  // namespace zb::catalog
