// torchtitan's settings for running one of our schedules from a PyTorch CSV: which schedule name
// gives the stage placement the CSV was made for, the CSV path, microbatches and layers per stage.
#pragma once

#include <optional>
#include <string>

#include "sim/core/problem.h"

namespace zb {

// torchtitan builds its stages from --parallelism.pipeline_parallel_schedule (a "v" placement for
// ZBVZeroBubble and DualPipeV, looped otherwise; one stage per rank for single-stage schedules,
// two for multi-stage ones unless pipeline_parallel_layers_per_stage says otherwise) and then
// runs the CSV with _PipelineScheduleRuntime, which reads compute-only CSVs. Returns the
// command-line overrides, one per line, with a comment on top. `layers` (the model's transformer
// layers) is needed only beyond two chunks per rank; throws InputError when it is missing there or
// no layers-per-stage value gives exactly p * chunks stages.
std::string torchtitan_settings(const Problem& problem, const std::string& csv_path, std::optional<int> layers);

}  // namespace zb
