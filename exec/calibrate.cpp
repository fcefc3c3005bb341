// Calibration: measures t_f, t_b, t_w per stage, t_comm and memory deltas, as a scenario for zbsim.
#include "exec/calibrate.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "exec/exec_error.h"
#include "exec/stage_model.h"
#include "sim/schedule/atomic_file.h"
#include "sim/schedule/error.h"
#include "exec/median.h"
#include "sim/schedule/json_text.h"

namespace zb::exec {

namespace {

struct StageMeasurement {
  double t_f_ms = 0, t_b_ms = 0, t_w_ms = 0, t_opt_ms = 0;
  double mem_f = 0, mem_b = 0, mem_w = 0;
};

StageMeasurement measure_stage(Device& device, const ModelConfig& model, const OptimizerConfig& optimizer_config,
                               int stage, int stages, int repeats) {
  const int runs = repeats + 1;  // the first run warms caches and the allocator up
  StageModel m(device, model, stage, stages, runs);
  m.begin_step();
  std::vector<double> f, b, w;
  StageMeasurement out;
  for (int r = 0; r < runs; ++r) {
    Tensor input = device.alloc(model.microbatch_size, model.hidden);
    device.upload(input, synthetic_input(model, 0, r));
    Tensor target = device.alloc(model.microbatch_size, model.hidden);
    device.upload(target, synthetic_target(model, 0, r));
    Tensor grad = device.alloc(model.microbatch_size, model.hidden);
    device.upload(grad, synthetic_target(model, 1, r));
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
    f.push_back((device.event_time_us(e1) - device.event_time_us(e0)) / 1000.0);
    b.push_back((device.event_time_us(e2) - device.event_time_us(e1)) / 1000.0);
    w.push_back((device.event_time_us(e3) - device.event_time_us(e2)) / 1000.0);
    out.mem_f = after_f - before;
    out.mem_b = after_b - after_f;
    out.mem_w = after_w - after_b;
  }
  // The update as a sync step applies it (the stage's gradients are complete now).
  StageOptimizer optimizer(m, optimizer_config);
  std::vector<double> updates;
  for (int r = 0; r < runs; ++r) {
    device.clear_events();
    const auto e0 = device.record_event();
    optimizer.apply(StepDecision{});
    const auto e1 = device.record_event();
    device.synchronize();
    if (r > 0) updates.push_back((device.event_time_us(e1) - device.event_time_us(e0)) / 1000.0);
  }
  // 0.1 us resolution: finer digits are clock noise and make scenario files hard to read.
  auto round = [](double ms) { return std::round(ms * 1e4) / 1e4; };
  out.t_f_ms = round(median(f));
  out.t_b_ms = round(median(b));
  out.t_w_ms = round(median(w));
  out.t_opt_ms = round(median(updates));
  return out;
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

  std::vector<StageMeasurement> measured(static_cast<std::size_t>(stages));
  std::vector<double> round_trips_ms;
  std::vector<double> control_trips_ms;
  constexpr int kPingPongs = 50;
  backend.run_on_devices([&](int d) {
    Device& device = backend.device(d);
    Fabric& fabric = backend.fabric();
    const std::uint64_t token = control_key(0, 0, ControlKind::verdict);
    if (d > 0 && !options.concurrent) fabric.recv_control(d - 1, d, token);  // one device at a time
    for (int s = 0; s < stages; ++s) {
      if (shape.device_of_stage(s) != d) continue;
      // Two model copies: stage s and p + s are the same slice s of the layers.
      const bool two_copies = options.placement == zb::Placement::bidirectional;
      measured[static_cast<std::size_t>(s)] = measure_stage(device, options.model, options.optimizer,
                                                            two_copies ? s % p : s, two_copies ? p : stages,
                                                            options.repeats);
    }
    const std::uint64_t done = control_key(1, 0, ControlKind::verdict);
    if (d + 1 < p && !options.concurrent) fabric.send_control(d, d + 1, token, {});
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
  for (const auto& m : measured) {
    result.t_f_ms.push_back(m.t_f_ms);
    result.t_b_ms.push_back(m.t_b_ms);
    result.t_w_ms.push_back(m.t_w_ms);
    result.t_opt_ms.push_back(m.t_opt_ms);
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

nlohmann::json scenario_json(const zb::ProblemSpec& spec) {
  nlohmann::json out;
  out["problem"] = zb::to_json(spec);
  return out;
}

zb::ProblemSpec read_scenario_spec(const std::string& path) {
  const std::string text = zb::read_file(path);
  const nlohmann::json object = zb::parse_json(text, path);
  if (!object.is_object() || !object.contains("problem")) {
    throw InputError(fmt::format("{}: expected an object with a 'problem' field", path));
  }
  return zb::problem_spec_from_json(object.at("problem"), path);
}

}  // namespace zb::exec
