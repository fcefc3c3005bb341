// Rules every front end's command line follows, whatever its options (zbsim, zbexec, zbview).
#pragma once

#include <boost/program_options.hpp>

namespace zb::cli {

// No option takes an empty value: `--svg ""` (an unset shell variable) would otherwise reach a
// writer as the path "" and fail as ": cannot write", naming neither the flag nor the cause.
// Throws InputError naming the first such option. Call it after po::store, before any work, with
// the options that were parsed (a flag without a value, e.g. --arrows, holds an empty text).
void refuse_empty_values(const boost::program_options::variables_map& values,
                         const boost::program_options::options_description& options);

}  // namespace zb::cli
