// zbsim: entry point, subcommand dispatch and the one place errors become exit codes.
#include "sim/cli/common/subcommands.h"
#include "sim/cli/commands.h"

namespace {

constexpr zb::cli::Subcommand kSubcommands[] = {
    {"compare", "compare schedules on one problem: span, bubble rate, memory", zb::cli::run_compare},
    {"simulate", "run one schedule through an engine and write its trace", zb::cli::run_simulate},
    {"compare-trace", "a measured trace (torch.profiler, zbexec) against a simulated one: per-device span differences", zb::cli::run_compare_trace},
    {"export", "write a schedule as text, JSON, PyTorch CSV, SVG or Chrome trace", zb::cli::run_export},
    {"solve", "the ILP optimum (zb-ilp) under a memory limit: status, span, bound, gap", zb::cli::run_solve},
    {"frontier", "bubble rate of zb-auto (and zb-ilp) against the memory limit, 1p..3p", zb::cli::run_frontier},
    {"sweep", "run a grid of scenarios in parallel into CSV and JSON lines", zb::cli::run_sweep},
    {"partition", "the layer split that runs a schedule fastest within device memory, with torchtitan and Megatron settings", zb::cli::run_partition},
    {"plot", "SVG charts from sweep results: bubble vs m, throughput, peak memory", zb::cli::run_plot},
    {"recommend", "the fastest plans for a model, cluster and global batch: pp, tp, dp, schedule, recompute", zb::cli::run_recommend},
    {"validate", "predictions against measured training runs (a CSV): errors per source and GPU, rank agreement", zb::cli::run_validate},
    {"calibrate-model", "fit the cost model's efficiencies to measured runs, with leave-one-source-out cross-validation", zb::cli::run_calibrate_model},
};

}  // namespace

int main(int argc, char** argv) {
  const zb::cli::Tool tool{"zbsim", "design, compare and verify pipeline-parallel schedules (Zero Bubble and friends)",
                               "zbsim compare --p 4 --m 8 --tf 1 --tb 1 --tw 1", "internal error",
                               "0 ok, 2 bad input, 1 internal failure"};
  return zb::cli::run_subcommands(tool, kSubcommands, argc, argv);
}
