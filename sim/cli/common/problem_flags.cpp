// Problem flags from the table of problem fields (see problem_flags.h).
#include "sim/cli/common/problem_flags.h"

#include <algorithm>

namespace zb::cli {

namespace po = boost::program_options;

void add_problem_flags(po::options_description& options, std::span<const std::string_view> only) {
  for (const ProblemField& field : problem_fields()) {
    if (!only.empty() && std::find(only.begin(), only.end(), field.key) == only.end()) continue;
    // Boost copies the name and the help.
    options.add_options()(std::string(field.flag).c_str(), po::value<std::string>(), std::string(field.help).c_str());
  }
}

std::vector<catalog::GivenField> given_problem_flags(const po::variables_map& values) {
  std::vector<catalog::GivenField> given;
  for (const ProblemField& field : problem_fields()) {
    const std::string flag(field.flag);
    if (values.count(flag)) given.push_back({&field, values[flag].as<std::string>()});
  }
  return given;
}

}  // namespace zb::cli
