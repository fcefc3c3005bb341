// The problem flags of the front ends (zbsim, zbview), made from the core's table of problem
// fields (sim/core/problem_fields.h): --p --m --chunks --placement --tf --tb --tw --tbw
// --tcomm --mem-f --mem-b --mem-w --mem-limit --bytes-act --time-unit.
#pragma once

#include <boost/program_options.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/app/catalog/given_field.h"
#include "sim/core/problem_fields.h"

namespace zb::cli {

// One flag per field, taking text that the table parses; with `only`, just the fields it names
// (zbexec takes the shape fields and the memory limit).
void add_problem_flags(boost::program_options::options_description& options,
                       std::span<const std::string_view> only = {});

// The problem flags present in `values`, in the table's order, as given fields.
std::vector<catalog::GivenField> given_problem_flags(const boost::program_options::variables_map& values);

}  // namespace zb::cli
