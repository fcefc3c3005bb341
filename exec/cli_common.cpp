// Flags shared by zbexec's subcommands: the model, the pipeline shape and the backend.
#include "exec/cli_common.h"

#include <fmt/format.h>

#include <iostream>

#include "sim/schedule/error.h"

namespace po = boost::program_options;

namespace zb::exec::cli {

void add_shape_options(po::options_description& options, ShapeFlags& flags) {
  options.add_options()
      ("backend", po::value(&flags.backend)->default_value("cpu"), "cpu (or cuda when built with CUDA)")
      ("p", po::value(&flags.devices)->default_value(2), "devices (pipeline ranks)")
      ("m", po::value(&flags.microbatches)->default_value(8), "microbatches per step")
      ("chunks", po::value(&flags.chunks)->default_value(1), "stages per device (v)")
      ("placement", po::value(&flags.placement), "linear | interleaved | vshape (default: linear for 1 chunk, interleaved otherwise)")
      ("layers", po::value(&flags.model.layers)->default_value(8), "residual MLP blocks, split evenly over the p x v stages")
      ("hidden", po::value(&flags.model.hidden)->default_value(256), "hidden size h (inner size 4h)")
      ("microbatch-size", po::value(&flags.model.microbatch_size)->default_value(4), "rows per microbatch")
      ("seed", po::value(&flags.seed)->default_value(1), "seed of the weights and the synthetic data");
}

zb::Placement resolve_shape(ShapeFlags& flags) {
  flags.model.seed = flags.seed;
  if (flags.devices < 1) throw InputError(fmt::format("--p {}: need at least 1 device", flags.devices));
  if (flags.microbatches < 1) throw InputError(fmt::format("--m {}: need at least 1 microbatch", flags.microbatches));
  if (flags.chunks < 1) throw InputError(fmt::format("--chunks {}: need at least 1", flags.chunks));
  if (flags.placement.empty()) {
    return flags.chunks == 1 ? zb::Placement::linear : zb::Placement::interleaved;
  }
  return zb::parse_placement(flags.placement, "--placement");
}

bool parse_or_help(int argc, char** argv, const po::options_description& options, const char* usage,
                   const char* example) {
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
  if (vm.count("help") != 0) {
    std::cout << usage << "\n\n" << options << "\nexample:\n  " << example << "\n";
    return false;
  }
  po::notify(vm);
  return true;
}

}  // namespace zb::exec::cli
