// Flags shared by zbexec's subcommands: the model, the pipeline shape and the backend.
#pragma once

#include <boost/program_options.hpp>

#include <optional>
#include <string>

#include "exec/model_config.h"
#include "sim/schedule/problem.h"

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

// Adds --backend --p --m --chunks --placement --layers --hidden --microbatch-size --seed.
void add_shape_options(boost::program_options::options_description& options, ShapeFlags& flags);
// Fills flags.model.seed and returns the placement the flags ask for.
zb::Placement resolve_shape(ShapeFlags& flags);

// Parses argv with `options`; returns false after printing help when --help was given.
bool parse_or_help(int argc, char** argv, const boost::program_options::options_description& options,
                   const char* usage, const char* example);

}  // namespace zb::exec::cli
