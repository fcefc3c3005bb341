// zbexec calibrate: measure per-stage costs and memory on a backend and write a zbsim scenario.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include <boost/program_options.hpp>

#include <string>

#include "exec/runtime/backend.h"
#include "exec/cli/backends.h"
#include "exec/calibration/calibrate.h"
#include "exec/cli/cli_common.h"
#include "exec/cli/commands.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"

namespace po = boost::program_options;

namespace zb::exec::cli {

int run_calibrate(int argc, char** argv) {
  ShapeFlags shape;
  std::string out_path;
  int repeats = 5;
  bool concurrent = false;
  std::string optimizer = "adamw";
  po::options_description options("zbexec calibrate options");
  options.add_options()("help,h", "show this help");
  add_shape_options(options, shape);
  BackendFlags backend_flags;
  add_backend_options(options, backend_flags);
  options.add_options()
      ("repeats", po::value(&repeats)->default_value(5), "timed rounds after one warm-up; each round times every stage's passes once, device after device, and a pass keeps the median of its rounds without outliers (modified z-score > 3.5); spread and outliers are printed")
      ("optimizer", po::value(&optimizer)->default_value("adamw"), "adamw | sgd: the update timed for t_opt (as zbexec run --optimizer)")
      ("concurrent", po::bool_switch(&concurrent), "all devices measure at once, competing for cores as in a run (default: one after another)")
      ("out", po::value(&out_path), "scenario file to write ({\"problem\": {...}}, read by zbsim --scenario)");
  const auto values = parse_or_help(argc, argv, options, "usage: zbexec calibrate --out FILE [options]",
                                    "zbexec calibrate --p 2 --layers 8 --hidden 256 --out calibrated.json && "
                                    "zbsim compare --scenario calibrated.json");
  if (!values) return 0;
  if (out_path.empty()) throw InputError("--out: required (the scenario file to write)");
  CalibrationOptions calibration_options;
  calibration_options.placement = resolve_shape(shape, *values);
  calibration_options.model = shape.model;
  calibration_options.devices = shape.devices;
  calibration_options.chunks = shape.chunks;
  calibration_options.microbatches = shape.microbatches;
  calibration_options.repeats = repeats;
  calibration_options.concurrent = concurrent;
  calibration_options.optimizer.kind = parse_optimizer_kind(optimizer);
  check_shape(shape);
  zb::check_writable(out_path);
  const auto backend = make_backend(shape.backend, shape.devices, backend_flags);
  const Calibration calibration = calibrate(*backend, calibration_options);

  fmt::print("zbexec calibrate: backend {}, p={} v={}, {} layers x hidden {}, microbatch {}, "
             "robust estimate of {} interleaved rounds{}\n",
             backend->name(), shape.devices, shape.chunks, shape.model.layers, shape.model.hidden,
             shape.model.microbatch_size, repeats, concurrent ? ", devices measuring concurrently" : "");
  fmt::print("{:<6} {:>7} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>12}\n", "stage", "device", "t_f ms",
             "t_b ms", "t_w ms", "t_opt ms", "mem_f B", "mem_b B", "mem_w B");
  const zb::Problem problem = calibration.spec.build("calibration");
  for (std::size_t s = 0; s < calibration.t_f_ms.size(); ++s) {
    fmt::print("{:<6} {:>7} {:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f} {:>12.0f} {:>12.0f} {:>12.0f}\n", s,
               problem.device_of_stage(static_cast<int>(s)), calibration.t_f_ms[s],
               calibration.t_b_ms[s], calibration.t_w_ms[s], calibration.t_opt_ms[s], calibration.mem_f_bytes[s],
               calibration.mem_b_bytes[s], calibration.mem_w_bytes[s]);
  }
  fmt::print("t_comm {:.4f} ms (half a round trip of a {}-byte activation between devices 0 and 1)\n",
             calibration.t_comm_ms, calibration.spec.bytes_act);
  fmt::print("t_reduce_hop {:.4f} ms (half a round trip of a control message: the norm all-reduce's)\n",
             calibration.t_reduce_hop_ms);
  const auto widest = std::max_element(calibration.spreads.begin(), calibration.spreads.end(),
                                       [](const auto& a, const auto& b) {
                                         return a.spread_ms / std::max(a.estimate_ms, 1e-12) <
                                                b.spread_ms / std::max(b.estimate_ms, 1e-12);
                                       });
  if (widest != calibration.spreads.end()) {
    fmt::print("spread (1.4826 x MAD of the rounds): {:.1f}% of the busiest device's work; widest stage {} {}: "
               "+/- {:.4f} ms ({:.1f}%)\n",
               100 * calibration.relative_spread(problem), widest->stage, widest->pass, widest->spread_ms,
               widest->estimate_ms > 0 ? 100 * widest->spread_ms / widest->estimate_ms : 0.0);
  }
  if (calibration.outliers.empty()) fmt::print("outliers: none\n");
  for (const std::string& outlier : calibration.outliers) fmt::print("outlier left out: {}\n", outlier);
  zb::write_file_atomically(
      out_path, scenario_json(calibration.spec, {calibration.relative_spread(problem), calibration.outliers}).dump(2) + "\n");
  fmt::print("scenario written: {}\n", out_path);
  return 0;
}

}  // namespace zb::exec::cli
