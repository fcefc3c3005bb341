// torchtitan's settings for a schedule CSV (torchtitan/config/configs.py, ParallelismConfig).
#include "sim/formats/torchtitan_settings.h"

#include <fmt/format.h>

#include "sim/support/error.h"

namespace zb {

namespace {

// The schedule name whose stage placement torchtitan builds for ours.
const char* schedule_name(const Problem& problem) {
  if (problem.chunks == 1) return "1F1B";                                // single stage: rank r holds stage r
  if (problem.placement == Placement::vshape) return "ZBVZeroBubble";    // "v": rank r holds r and 2p-1-r
  return "Interleaved1F1B";                                              // "loop": rank r holds r, r+p, ...
}

// torchtitan counts the embedding and the output layer as one layer each
// (pipeline_parallel_first/last_stage_less_layers = 1) and makes ceil((layers + 2) / per_stage)
// stages; the smallest per_stage that gives exactly `stages`.
std::optional<int> layers_per_stage(int layers, int stages) {
  const int effective = layers + 2;
  for (int per_stage = 1; per_stage <= effective; ++per_stage) {
    if ((effective + per_stage - 1) / per_stage == stages) return per_stage;
  }
  return std::nullopt;
}

}  // namespace

std::string torchtitan_settings(const Problem& problem, const std::string& csv_path, std::optional<int> layers) {
  const int stages = problem.stages();
  std::string out = fmt::format(
      "# torchtitan overrides for {} ({} ranks, {} stages, {} microbatches): pass them to run_train.sh with NGPU={}\n"
      "# (times the other parallel degrees); the CSV path is read from where torchtitan runs, and the local\n"
      "# batch size must be a multiple of {}.\n",
      csv_path, problem.devices, stages, problem.microbatches, problem.devices, problem.microbatches);
  out += fmt::format("--parallelism.pipeline_parallel_degree {}\n", problem.devices);
  out += fmt::format("--parallelism.pipeline_parallel_schedule {}\n", schedule_name(problem));
  out += fmt::format("--parallelism.pipeline_parallel_schedule_csv {}\n", csv_path);
  out += fmt::format("--parallelism.num_pp_microbatches {}\n", problem.microbatches);
  if (problem.chunks > 2 || layers) {
    if (!layers) {
      throw InputError(fmt::format("--to torchtitan: {} chunks per rank need the model's layer count (--layers N) to "
                                   "set pipeline_parallel_layers_per_stage (torchtitan makes 2 stages per rank "
                                   "otherwise)",
                                   problem.chunks));
    }
    const auto per_stage = layers_per_stage(*layers, stages);
    if (!per_stage) {
      throw InputError(fmt::format("--to torchtitan: no pipeline_parallel_layers_per_stage gives {} stages for {} "
                                   "layers (torchtitan makes ceil((layers + 2) / per_stage) stages); list the "
                                   "modules per stage with module_fqns_per_model_part instead",
                                   stages, *layers));
    }
    out += fmt::format("--parallelism.pipeline_parallel_layers_per_stage {}\n", *per_stage);
  }
  return out;
}

}  // namespace zb
