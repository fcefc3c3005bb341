// Calibration: measures t_f, t_b, t_w per stage, t_comm, the optimizer step (t_opt per device,
// t_reduce_hop) and memory deltas, as a scenario for zbsim.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

#include "exec/runtime/backend.h"
#include "exec/runtime/model_config.h"
#include "exec/runtime/optimizer.h"
#include "sim/core/problem.h"
#include "sim/core/problem_spec.h"

namespace zb::exec {

struct CalibrationOptions {
  ModelConfig model;
  OptimizerConfig optimizer;  // the update timed for t_opt
  int devices = 2;
  int chunks = 1;
  zb::Placement placement = zb::Placement::linear;
  int microbatches = 8;  // written into the scenario (the costs do not depend on it)
  // Timed rounds (after one warm-up round); each round times every stage's F, B and W once, one
  // device after another, then every update; a pass keeps the robust estimate of its rounds
  // (robust_estimate.h), its spread and its outliers reported.
  int repeats = 5;
  // false: devices measure one after another, each pass alone on the machine (clean costs).
  // true: all devices measure at once, competing for cores as they do in a run (on a machine with
  // fewer cores than devices, or busy with other work, this is what a run will see).
  bool concurrent = false;
};

struct Calibration {
  zb::ProblemSpec spec;  // per-stage costs in ms, memory deltas in bytes, t_comm in ms
  std::vector<double> t_f_ms, t_b_ms, t_w_ms;
  double t_comm_ms = 0;
  std::vector<double> t_opt_ms;  // per stage: the gradient norm's squared sums and one update
  double t_reduce_hop_ms = 0;    // half a round trip of a control message (the norm all-reduce's)
  std::vector<double> mem_f_bytes, mem_b_bytes, mem_w_bytes;
  // Per stage and pass (t_f, t_b, t_w, t_opt): the estimate and the spread of its rounds, in ms.
  struct Spread {
    int stage = 0;
    std::string pass;
    double estimate_ms = 0, spread_ms = 0;
  };
  std::vector<Spread> spreads;
  std::vector<std::string> outliers;  // "stage 1 t_f round 3: 2.1000 ms (estimate 1.0100 ms)"

  // The spread of the costs relative to their sum on the busiest device (sum of the F, B and W
  // spreads of its stages over the sum of their estimates): how far a prediction made from these
  // costs may move from the calibration's noise alone (a prediction scales with the costs).
  double relative_spread(const zb::Problem& shape) const;
};

// Measures every stage on its device (one after another unless options.concurrent).
Calibration calibrate(Backend& backend, const CalibrationOptions& options);

// What a calibration file keeps of the calibration's noise besides the costs, so that a
// prediction made from the file states the same spread as one calibrated in the run.
struct CalibrationNoise {
  double spread = 0;  // Calibration::relative_spread on the calibrated shape
  std::vector<std::string> outliers;
};

// The scenario file zbsim reads: {"problem": {...}, "calibration": {"spread", "outliers"}}.
nlohmann::json scenario_json(const zb::ProblemSpec& spec, const CalibrationNoise& noise);

struct CalibrationFile {
  zb::ProblemSpec spec;
  std::optional<CalibrationNoise> noise;  // absent in a scenario written by hand or by zbsim
};
// Reads a scenario file's problem and calibration record (InputError naming the file and field
// when malformed).
CalibrationFile read_calibration_file(const std::string& path);

}  // namespace zb::exec
