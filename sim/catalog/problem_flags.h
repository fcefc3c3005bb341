// The problem flags of the front ends (zbsim, zbview), made from the core's table of problem
// fields (sim/schedule/problem_fields.h): --p --m --chunks --placement --tf --tb --tw --tbw
// --tcomm --mem-f --mem-b --mem-w --mem-limit --bytes-act --time-unit.
#pragma once

#include <boost/program_options.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/schedule/problem_fields.h"
#include "sim/schedule/problem_spec.h"

namespace zb::catalog {

// One flag per field, taking text that the table parses; with `only`, just the fields it names
// (zbexec takes the shape fields and the memory limit).
void add_problem_flags(boost::program_options::options_description& options,
                       std::span<const std::string_view> only = {});

// A problem flag as given on the command line.
struct GivenField {
  const ProblemField* field = nullptr;
  std::string text;

  // Sets the field on `spec`; InputError naming the flag and value.
  void apply(ProblemSpec& spec) const;
};

// The problem flags present in `values`, in the table's order.
std::vector<GivenField> given_problem_flags(const boost::program_options::variables_map& values);

}  // namespace zb::catalog
