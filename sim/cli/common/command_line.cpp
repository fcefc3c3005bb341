// Rules every front end's command line follows (see command_line.h).
#include "sim/cli/common/command_line.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/support/error.h"

namespace zb::cli {

void refuse_empty_values(const boost::program_options::variables_map& values,
                         const boost::program_options::options_description& options) {
  for (const auto& [name, value] : values) {
    if (value.defaulted() || value.empty()) continue;
    const auto* option = options.find_nothrow(name, false);
    if (option == nullptr || option->semantic()->max_tokens() == 0) continue;
    bool empty = false;
    if (const auto* text = boost::any_cast<std::string>(&value.value())) {
      empty = text->empty();
    } else if (const auto* list = boost::any_cast<std::vector<std::string>>(&value.value())) {
      empty = std::any_of(list->begin(), list->end(), [](const std::string& item) { return item.empty(); });
    }
    if (empty) throw InputError(fmt::format("--{}: empty value (give one, or leave the option out)", name));
  }
}

}  // namespace zb::cli
