// Rules every front end's command line follows, whatever its options (zbsim, zbexec, zbview).
#pragma once

#include <boost/program_options.hpp>

#include <initializer_list>

namespace zb::cli {

// No option takes an empty value: `--svg ""` (an unset shell variable) would otherwise reach a
// writer as the path "" and fail as ": cannot write", naming neither the flag nor the cause.
// Throws InputError naming the first such option. Call it after po::store, before any work, with
// the options that were parsed (a flag without a value, e.g. --arrows, holds an empty text).
void refuse_empty_values(const boost::program_options::variables_map& values,
                         const boost::program_options::options_description& options);

// No file is written twice or written over what is read: two of the `outputs` flags naming one
// file (`--svg a --chrome a`), or one naming a file another option reads (`sweep --grid g.json
// --out g.json`), is refused before any work with InputError naming both flags. Files are the same
// when their paths resolve alike or they are one file (a link); devices (/dev/null, /dev/stdout)
// and folders are never a clash.
void refuse_clashing_paths(const boost::program_options::variables_map& values,
                           std::initializer_list<const char*> outputs);

}  // namespace zb::cli
