// Flags shared by zbexec's subcommands: the model, the pipeline shape and the backend.
#include "exec/cli/cli_common.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "sim/cli/common/command_line.h"
#include "sim/cli/common/problem_flags.h"
#include "sim/support/error.h"

namespace po = boost::program_options;

namespace zb::exec::cli {

namespace {

constexpr std::string_view kShapeFields[] = {"p", "m", "chunks", "placement"};

}  // namespace

void add_shape_options(po::options_description& options, ShapeFlags& flags) {
  po::options_description shape("Pipeline shape (as zbsim's problem flags; defaults --p 2 --m 8 --chunks 1)");
  zb::cli::add_problem_flags(shape, kShapeFields);
  options.add(shape);
  options.add_options()
      ("backend", po::value(&flags.backend)->default_value("cpu"), "cpu (or cuda when built with CUDA)")
      ("layers", po::value(&flags.model.layers)->default_value(8), "residual MLP blocks, split evenly over the p x v stages")
      ("hidden", po::value(&flags.model.hidden)->default_value(256), "hidden size h (inner size 4h)")
      ("microbatch-size", po::value(&flags.model.microbatch_size)->default_value(4), "rows per microbatch")
      ("seed", po::value(&flags.seed)->default_value(1), "seed of the weights and the synthetic data");
}

zb::Placement resolve_shape(ShapeFlags& flags, const po::variables_map& values) {
  zb::ProblemSpec shape;
  shape.devices = flags.devices;
  shape.microbatches = flags.microbatches;
  shape.chunks = flags.chunks;
  for (const catalog::GivenField& given : zb::cli::given_problem_flags(values)) {
    if (std::find(std::begin(kShapeFields), std::end(kShapeFields), given.field->key) == std::end(kShapeFields)) continue;
    given.apply(shape);
    if (given.field->key == "placement") flags.placement = given.text;
  }
  flags.devices = shape.devices;
  flags.microbatches = shape.microbatches;
  flags.chunks = shape.chunks;
  flags.model.seed = flags.seed;
  if (flags.devices < 1) throw InputError(fmt::format("--p {}: need at least 1 device", flags.devices));
  if (flags.microbatches < 1) throw InputError(fmt::format("--m {}: need at least 1 microbatch", flags.microbatches));
  if (flags.chunks < 1) throw InputError(fmt::format("--chunks {}: need at least 1", flags.chunks));
  if (flags.placement.empty()) {
    return flags.chunks == 1 ? zb::Placement::linear : zb::Placement::interleaved;
  }
  return zb::parse_placement(flags.placement, "--placement");
}

void check_shape(const ShapeFlags& flags) {
  // One thread per device, each with 8 MiB of stack address space and its own weights: 256 is
  // 2 GiB of stacks, and more than the devices of any one node (multi-node runs have a process
  // per device).
  if (flags.devices > kMaxExecDevices) {
    throw InputError(fmt::format("--p {}: over the limit of {} devices in one zbexec process", flags.devices,
                                 kMaxExecDevices));
  }
  // Every action is real work with its bookkeeping (tens of microseconds even for a tiny model):
  // 10^6 actions is most of a minute per step, beyond real pipelines (p=64, chunks=4, m=1024).
  const double actions = 3.0 * flags.devices * flags.chunks * flags.microbatches;
  if (actions > kMaxExecActions) {
    throw InputError(fmt::format("--p {} x --chunks {} x --m {} is {:.0f} actions per step, over the limit of {:.0f} "
                                 "in zbexec", flags.devices, flags.chunks, flags.microbatches, actions,
                                 kMaxExecActions));
  }
  flags.model.validate(flags.devices * flags.chunks);
  // Per layer: W1, W2 (4h x h each) and the biases, each with its gradient and two AdamW moments
  // (16 bytes per parameter); activations: about 10h floats per row kept by each microbatch in
  // flight (at most m). In doubles, so huge flags cannot overflow.
  const double h = flags.model.hidden;
  const double layers = flags.model.layers;
  const double weights = layers * (8 * h * h + 5 * h) * 16;
  const double activations = layers * flags.microbatches * flags.model.microbatch_size * 10 * h * 4;
  const double memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (weights + activations > memory) {
    throw InputError(fmt::format("--layers {} --hidden {} --microbatch-size {} (--m {}): the model needs about {:.3g} "
                                 "GiB, over the limit of this machine's memory ({:.3g} GiB)",
                                 flags.model.layers, flags.model.hidden, flags.model.microbatch_size,
                                 flags.microbatches, (weights + activations) / (1 << 30), memory / (1 << 30)));
  }
}

std::optional<po::variables_map> parse_or_help(int argc, char** argv, const po::options_description& options,
                                               const char* usage, const char* example) {
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
  if (vm.count("help") != 0) {
    std::cout << usage << "\n\n" << options << "\nexample:\n  " << example << "\n";
    return std::nullopt;
  }
  po::notify(vm);
  zb::cli::refuse_empty_values(vm, options);
  zb::cli::refuse_clashing_paths(vm, {"trace", "chrome", "svg", "out"});  // zbexec's outputs, in every command
  return vm;
}

}  // namespace zb::exec::cli
