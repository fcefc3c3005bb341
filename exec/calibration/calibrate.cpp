// Calibration: measures t_f, t_b, t_w per stage, t_comm and memory deltas, as a scenario for zbsim.
#include "exec/calibration/calibrate.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <memory>

#include "exec/runtime/exec_error.h"
#include "exec/runtime/stage_model.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/support/median.h"
#include "exec/calibration/detail/robust_estimate.h"
#include "sim/support/json_text.h"

namespace zb::exec {

namespace {

// Every timing of one stage, one sample per round (the warm-up round left out), and its memory deltas.
struct StageSamples {
  std::vector<double> f, b, w, opt;
  double mem_f = 0, mem_b = 0, mem_w = 0;
};

// Runs `rounds` rounds of `body(round)` on device d. Unless `concurrent`, one device at a time in
// every round: a token goes d0 -> d1 -> ... -> d(p-1) and back to d0 for the next round, so a
// burst of load on the machine hits every stage of a round alike, instead of every repeat of the
// stages measured during the burst (a median cannot undo that).
template <typename Body>
void in_rounds(Fabric& fabric, int d, int p, int rounds, bool concurrent, int key_base, Body&& body) {
  const auto token = [&](int round) { return control_key(key_base + round, 0, ControlKind::verdict); };
  for (int r = 0; r < rounds; ++r) {
    if (!concurrent && p > 1) {
      if (d > 0) fabric.recv_control(d - 1, d, token(r));
      if (d == 0 && r > 0) fabric.recv_control(p - 1, 0, token(r));
    }
    body(r);
    if (!concurrent && p > 1) {
      if (d + 1 < p) fabric.send_control(d, d + 1, token(r), {});
      if (d + 1 == p && r + 1 < rounds) fabric.send_control(d, 0, token(r + 1), {});
    }
  }
}

// Device d's stages: F, B and W of every stage once per round (microbatch = round), then, in as
// many rounds again, the update of every stage (the stages' gradients are complete by then).
void measure_device(Device& device, Fabric& fabric, const CalibrationOptions& options, const zb::Problem& shape,
                    int d, std::vector<StageSamples>& samples) {
  const int stages = shape.stages();
  const int runs = options.repeats + 1;  // the first round warms caches and the allocator up
  std::vector<int> own;
  for (int s = 0; s < stages; ++s) {
    if (shape.device_of_stage(s) == d) own.push_back(s);
  }
  std::vector<std::unique_ptr<StageModel>> models;
  // Two model copies (bidirectional): stage s and p + s are the same slice s of the layers.
  const bool two_copies = options.placement == zb::Placement::bidirectional;
  for (const int s : own) {
    models.push_back(std::make_unique<StageModel>(device, options.model, two_copies ? s % shape.devices : s,
                                                  two_copies ? shape.devices : stages, runs));
    models.back()->begin_step();
  }
  const auto elapsed_ms = [&](auto from, auto to) {
    return (device.event_time_us(to) - device.event_time_us(from)) / 1000.0;
  };
  std::vector<std::unique_ptr<StageOptimizer>> optimizers;
  // One sequence of rounds, so that no device's updates overlap another's passes.
  constexpr int kRoundsKey = 16;  // above the other calibration messages' steps (0, 1)
  in_rounds(fabric, d, shape.devices, 2 * runs, options.concurrent, kRoundsKey, [&](int round) {
    if (round >= runs) {
      // The update as a sync step applies it (the stages' gradients are complete now).
      const int r = round - runs;
      if (r == 0) {
        for (auto& m : models) optimizers.push_back(std::make_unique<StageOptimizer>(*m, options.optimizer));
      }
      for (std::size_t i = 0; i < own.size(); ++i) {
        device.clear_events();
        const auto e0 = device.record_event();
        // A step computes the gradients' squared sums (its share of the norm all-reduce) and
        // then updates, both between its last W and its next F: t_opt is both, as zbexec runs them.
        models[i]->gradient_square_sums();
        optimizers[i]->apply(StepDecision{});
        const auto e1 = device.record_event();
        device.synchronize();
        if (r > 0) samples[static_cast<std::size_t>(own[i])].opt.push_back(elapsed_ms(e0, e1));
      }
      return;
    }
    const int r = round;
    for (std::size_t i = 0; i < own.size(); ++i) {
      StageModel& m = *models[i];
      StageSamples& out = samples[static_cast<std::size_t>(own[i])];
      Tensor input = device.alloc(options.model.microbatch_size, options.model.hidden);
      device.upload(input, synthetic_input(options.model, 0, r));
      Tensor target = device.alloc(options.model.microbatch_size, options.model.hidden);
      device.upload(target, synthetic_target(options.model, 0, r));
      Tensor grad = device.alloc(options.model.microbatch_size, options.model.hidden);
      device.upload(grad, synthetic_target(options.model, 1, r));
      device.clear_events();
      const double before = static_cast<double>(m.saved_bytes());
      const auto e0 = device.record_event();
      m.forward(r, std::move(input), target);
      const auto e1 = device.record_event();
      const double after_f = static_cast<double>(m.saved_bytes());
      m.backward_input(r, std::move(grad));
      const auto e2 = device.record_event();
      const double after_b = static_cast<double>(m.saved_bytes());
      m.backward_weight(r);
      const auto e3 = device.record_event();
      const double after_w = static_cast<double>(m.saved_bytes());
      device.synchronize();
      if (r == 0) continue;
      out.f.push_back(elapsed_ms(e0, e1));
      out.b.push_back(elapsed_ms(e1, e2));
      out.w.push_back(elapsed_ms(e2, e3));
      out.mem_f = after_f - before;
      out.mem_b = after_b - after_f;
      out.mem_w = after_w - after_b;
    }
  });
}

// 0.1 us resolution: finer digits are clock noise and make scenario files hard to read.
double round_ms(double ms) { return std::round(ms * 1e4) / 1e4; }

// The robust estimate of one pass of one stage, its spread and outliers into `result`.
double keep(const std::vector<double>& samples, int stage, const char* pass, Calibration& result) {
  const RobustEstimate estimate = robust_estimate(samples);
  result.spreads.push_back({stage, pass, estimate.value, estimate.spread});
  for (const std::size_t i : estimate.outliers) {
    result.outliers.push_back(fmt::format("stage {} {} round {}: {:.4f} ms (estimate {:.4f} ms)", stage, pass, i + 1,
                                          samples[i], estimate.value));
  }
  return round_ms(estimate.value);
}

}  // namespace

Calibration calibrate(Backend& backend, const CalibrationOptions& options) {
  const int p = options.devices;
  const int stages = p * options.chunks;
  if (backend.device_count() != p) throw ExecError("calibrate: backend device count differs from p");
  if (options.repeats < 1) throw InputError(fmt::format("--repeats {}: need at least 1", options.repeats));
  options.model.validate(stages);
  zb::Problem shape;  // only the placement is used, to map stages to devices
  shape.devices = p;
  shape.chunks = options.chunks;
  shape.placement = options.placement;
  shape.microbatches = options.microbatches;

  std::vector<StageSamples> measured(static_cast<std::size_t>(stages));
  std::vector<double> round_trips_ms;
  std::vector<double> control_trips_ms;
  constexpr int kPingPongs = 50;
  backend.run_on_devices([&](int d) {
    Device& device = backend.device(d);
    Fabric& fabric = backend.fabric();
    measure_device(device, fabric, options, shape, d, measured);
    const std::uint64_t done = control_key(1, 0, ControlKind::verdict);
    // Every device tells devices 0 and 1 it has finished, so they time t_comm undisturbed.
    for (int e = 0; e < std::min(p, 2); ++e) {
      if (e != d) fabric.send_control(d, e, done, {});
    }
    // t_comm: half the round trip of an activation-sized message between devices 0 and 1.
    if (p < 2 || d > 1) return;
    for (int other = 0; other < p; ++other) {
      if (other != d) fabric.recv_control(other, d, done);
    }
    for (int i = 0; i < kPingPongs; ++i) {
      if (d == 0) {
        Tensor message = device.alloc(options.model.microbatch_size, options.model.hidden);
        device.clear_events();
        const auto e0 = device.record_event();
        fabric.send(0, 1, MessageTag{i, 0, 1, 0}, std::move(message));
        Tensor back = fabric.recv(1, 0, MessageTag{i, 1, 0, 0}, device);
        const auto e1 = device.record_event();
        device.synchronize();
        round_trips_ms.push_back((device.event_time_us(e1) - device.event_time_us(e0)) / 1000.0);
      } else {
        Tensor message = fabric.recv(0, 1, MessageTag{i, 0, 1, 0}, device);
        fabric.send(1, 0, MessageTag{i, 1, 0, 0}, std::move(message));
      }
    }
    // t_reduce_hop: half the round trip of a control message, as the norm all-reduce sends them.
    for (int i = 0; i < kPingPongs; ++i) {
      const std::uint64_t key = control_key(2 + i, 0, ControlKind::norm_partial);
      if (d == 0) {
        device.clear_events();
        const auto e0 = device.record_event();
        fabric.send_control(0, 1, key, {0.0});
        fabric.recv_control(1, 0, key);
        const auto e1 = device.record_event();
        device.synchronize();
        control_trips_ms.push_back((device.event_time_us(e1) - device.event_time_us(e0)) / 1000.0);
      } else {
        fabric.send_control(1, 0, key, fabric.recv_control(0, 1, key));
      }
    }
  });
  Calibration result;
  for (int s = 0; s < stages; ++s) {
    const StageSamples& m = measured[static_cast<std::size_t>(s)];
    result.t_f_ms.push_back(keep(m.f, s, "t_f", result));
    result.t_b_ms.push_back(keep(m.b, s, "t_b", result));
    result.t_w_ms.push_back(keep(m.w, s, "t_w", result));
    result.t_opt_ms.push_back(keep(m.opt, s, "t_opt", result));
    result.mem_f_bytes.push_back(m.mem_f);
    result.mem_b_bytes.push_back(m.mem_b);
    result.mem_w_bytes.push_back(m.mem_w);
  }
  result.t_comm_ms = round_trips_ms.empty() ? 0.0 : std::round(median(round_trips_ms) / 2.0 * 1e4) / 1e4;
  result.t_reduce_hop_ms =
      control_trips_ms.empty() ? 0.0 : std::round(median(control_trips_ms) / 2.0 * 1e4) / 1e4;

  zb::ProblemSpec& spec = result.spec;
  spec.devices = p;
  spec.microbatches = options.microbatches;
  spec.chunks = options.chunks;
  spec.placement = options.placement;
  spec.t_f = result.t_f_ms;
  spec.t_b = result.t_b_ms;
  spec.t_w = result.t_w_ms;
  spec.t_comm = {result.t_comm_ms};
  // A device updates its stages one after another.
  spec.t_opt.assign(static_cast<std::size_t>(p), 0.0);
  for (int s = 0; s < stages; ++s) {
    spec.t_opt[static_cast<std::size_t>(shape.device_of_stage(s))] += result.t_opt_ms[static_cast<std::size_t>(s)];
  }
  spec.t_reduce_hop = result.t_reduce_hop_ms;
  spec.mem_f = result.mem_f_bytes;
  spec.mem_b = result.mem_b_bytes;
  spec.mem_w = result.mem_w_bytes;
  spec.bytes_act = static_cast<double>(options.model.microbatch_size) *
                   static_cast<double>(options.model.hidden) * sizeof(float);
  spec.time_unit = zb::TimeUnit::ms;
  spec.build("calibration");  // what we write must read back
  return result;
}

double Calibration::relative_spread(const zb::Problem& shape) const {
  std::vector<double> spread(static_cast<std::size_t>(shape.devices), 0.0);
  std::vector<double> work(static_cast<std::size_t>(shape.devices), 0.0);
  for (const Spread& item : spreads) {
    if (item.pass == "t_opt") continue;
    const auto d = static_cast<std::size_t>(shape.device_of_stage(item.stage));
    spread[d] += item.spread_ms;
    work[d] += item.estimate_ms;
  }
  const auto busiest = static_cast<std::size_t>(std::max_element(work.begin(), work.end()) - work.begin());
  return work[busiest] > 0 ? spread[busiest] / work[busiest] : 0.0;
}

nlohmann::json scenario_json(const zb::ProblemSpec& spec, const CalibrationNoise& noise) {
  nlohmann::json out;
  out["problem"] = zb::to_json(spec);
  out["calibration"] = {{"spread", noise.spread}, {"outliers", noise.outliers}};
  return out;
}

CalibrationFile read_calibration_file(const std::string& path) {
  const std::string text = zb::read_file(path);
  const nlohmann::json object = zb::parse_json(text, path);
  if (!object.is_object() || !object.contains("problem")) {
    throw InputError(fmt::format("{}: expected an object with a 'problem' field", path));
  }
  CalibrationFile file;
  file.spec = zb::problem_spec_from_json(object.at("problem"), path);
  if (object.contains("calibration")) {
    const nlohmann::json& record = object.at("calibration");
    const auto bad = [&](const char* field) {
      return InputError(fmt::format("{}: field 'calibration.{}' must be {}", path, field,
                                    std::string_view(field) == "spread" ? "a number >= 0" : "an array of strings"));
    };
    if (!record.is_object()) throw InputError(fmt::format("{}: field 'calibration' must be an object", path));
    CalibrationNoise noise;
    if (record.contains("spread")) {
      const nlohmann::json& spread = record.at("spread");
      if (!spread.is_number() || !(spread.get<double>() >= 0)) throw bad("spread");
      noise.spread = spread.get<double>();
    }
    if (record.contains("outliers")) {
      const nlohmann::json& outliers = record.at("outliers");
      if (!outliers.is_array()) throw bad("outliers");
      for (const nlohmann::json& item : outliers) {
        if (!item.is_string()) throw bad("outliers");
        noise.outliers.push_back(item.get<std::string>());
      }
    }
    file.noise = noise;
  }
  return file;
}

}  // namespace zb::exec
