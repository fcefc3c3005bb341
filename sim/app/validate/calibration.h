// zbsim calibrate-model: the efficiencies a roofline leaves out (models/hardware.h, Efficiencies),
// fitted per GPU architecture, and per hardware preset where a preset has rows enough of its own,
// to measured runs; and how well they predict a source they were not fitted on
// (leave-one-source-out cross-validation).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/hardware.h"
#include "sim/app/validate/error_stats.h"
#include "sim/app/validate/measured_csv.h"

namespace zb::validate {

// Each efficiency's range: what a GPU and its libraries can physically do, never a bound chosen to
// steer a fit. GEMMs: tuned large cuBLAS GEMMs sustain 40-95% of the tensor-core peak;
// memory-bound kernels 60-95% of HBM bandwidth (a streaming copy reaches about 90%); a kernel's
// fixed cost 0-50 us (a launch is a few, a framework's dispatch of one op tens); ring collectives
// 30-100% of the link's bandwidth (NCCL's bus bandwidth over the link's); fused attention kernels
// 20-90% of the BF16 peak (FlashAttention-2 reaches 50-73% of an A100's by its paper and about 35%
// of an H100's by FlashAttention-3's, which reaches up to 75% there); a GEMM with a misaligned
// dimension 10-100% of an aligned one's rate (off the tensor cores, an A100's FP16 runs at a
// quarter of their peak by its datasheet, 78 of 312 TFLOPS, and narrow loads cost more).
struct EfficiencyBounds {
  models::Efficiencies low{0.4, 0.6, 0, 0.3, 0.2, 0.1};
  models::Efficiencies high{0.95, 0.95, 50, 1, 0.9, 1};
};

struct CalibrationOptions {
  int jobs = 1;
  int max_evaluations = 300;  // per fit
  EfficiencyBounds bounds;
  // After each evaluation of the objective: what is being fitted ("all sources", "without S2b") and
  // the evaluations so far.
  std::function<void(const std::string& fit, int evaluations)> progress;
};

// A preset is fitted on its own (besides its architecture's fit over all the architecture's rows)
// from this many rows, when its architecture has rows of other presets too: a GPU whose clocks
// differ (a power limit) then keeps its difference for itself.
inline constexpr std::size_t kPresetFitRows = 10;

// The efficiencies of one architecture, or of one preset of it, fitted on `rows` (their ids) from
// `sources`.
struct ArchitectureFit {
  std::string architecture;
  std::string preset;  // empty: every preset of the architecture without a fit of its own
  models::Efficiencies values;
  // Efficiencies (field names) no row's prediction depends on: left at the roofline's value.
  std::vector<std::string> not_informed;
  std::vector<std::string> rows;
  std::vector<std::string> sources;
  double loss = 0;  // the source-balanced mean |log(predicted / measured)| at `values`
  int evaluations = 0;
};

struct HeldOutSource {
  std::string source;
  ErrorSummary errors;  // of its rows, predicted with efficiencies fitted without it
  std::vector<ArchitectureFit> fits;
  std::vector<std::string> unfitted;  // architectures of its rows no other source has: roofline there
};

struct Calibration {
  std::string path;
  int rows = 0;                        // rows that count and are predicted
  std::vector<ArchitectureFit> fits;   // on every source
  ErrorSummary roofline;               // the uncalibrated model on the same rows
  ErrorSummary fitted;                 // in sample: with `fits`
  std::vector<HeldOutSource> folds;    // one per source
  ErrorSummary cross_validated;        // every fold's held-out errors, pooled
};

// Fits on every row of `table` that counts (validation.h) and has a GPU architecture.
Calibration calibrate(const MeasuredTable& table, const CalibrationOptions& options);

// What was fitted and its cross-validated error, as a table; and as JSON, with each architecture's
// calibration file (models/calibration/<architecture>.json, models/hardware.h).
std::string calibration_table(const Calibration& c);
nlohmann::json calibration_json(const Calibration& c);
// The calibration file of one fitted architecture.
nlohmann::json calibration_file(const Calibration& c, const ArchitectureFit& fit);

}  // namespace zb::validate
