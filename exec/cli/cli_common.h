// Flags shared by zbexec's subcommands: the model, the pipeline shape and the backend.
#pragma once

#include <boost/program_options.hpp>

#include <optional>
#include <string>

#include "exec/runtime/model_config.h"
#include "sim/core/problem.h"

namespace zb::exec::cli {

struct ShapeFlags {
  std::string backend = "cpu";
  int devices = 2;
  int microbatches = 8;
  int chunks = 1;
  std::string placement;  // empty: linear for 1 chunk, interleaved otherwise
  ModelConfig model;
  unsigned long long seed = 1;
};

// Adds --backend --layers --hidden --microbatch-size --seed, and --p --m --chunks --placement as
// zbsim's problem flags (the catalog's table: the same words, parsing and errors).
void add_shape_options(boost::program_options::options_description& options, ShapeFlags& flags);
// Applies the problem flags given in `values` over the defaults (p 2, m 8, chunks 1), fills
// flags.model.seed and returns the placement the flags ask for.
zb::Placement resolve_shape(ShapeFlags& flags, const boost::program_options::variables_map& values);

// The sizes one zbexec process runs, checked before anything is allocated (InputError naming the
// flag and the limit): at most kMaxExecDevices devices (one thread each), kMaxExecActions actions
// per step, and a model whose weights, gradients, optimizer state and activations fit in this
// machine's memory. Also checks the model itself (ModelConfig::validate).
inline constexpr int kMaxExecDevices = 256;
inline constexpr double kMaxExecActions = 1e6;
void check_shape(const ShapeFlags& flags);

// Parses argv with `options`; nullopt after printing help when --help was given.
std::optional<boost::program_options::variables_map> parse_or_help(
    int argc, char** argv, const boost::program_options::options_description& options, const char* usage,
    const char* example);

}  // namespace zb::exec::cli
