// The engine: runs a validated zb::Schedule on a backend for several training steps.
#include "exec/runtime/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <limits>
#include <memory>

#include "exec/runtime/detail/device_output.h"
#include "exec/runtime/exec_error.h"
#include "exec/runtime/stage_model.h"
#include "sim/support/error.h"
#include "sim/core/trace.h"
#include "sim/core/validator.h"

namespace zb::exec {

SyncMode parse_sync_mode(std::string_view text) {
  if (text == "sync") return SyncMode::sync;
  if (text == "post-validation") return SyncMode::post_validation;
  throw InputError(fmt::format("--mode '{}': expected sync or post-validation", text));
}

std::string_view sync_mode_name(SyncMode mode) {
  return mode == SyncMode::sync ? "sync" : "post-validation";
}

NonfiniteInjection parse_injection(std::string_view text) {
  const auto colon = text.find(':');
  NonfiniteInjection injection;
  auto parse_int = [&](std::string_view part, int& out) {
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    return ec == std::errc() && ptr == part.data() + part.size() && out >= 0;
  };
  if (colon == std::string_view::npos || !parse_int(text.substr(0, colon), injection.step) ||
      !parse_int(text.substr(colon + 1), injection.stage)) {
    throw InputError(fmt::format("--inject-nonfinite '{}': expected STEP:STAGE (e.g. 1:0)", text));
  }
  return injection;
}

namespace {

// One action as measured: events resolve to times once the device has synchronised.
struct ActionRecord {
  zb::Action action;
  int stage = 0;
  std::size_t start_event = 0;
  std::size_t end_event = 0;
};

struct MemoryRecord {
  std::size_t event = 0;
  double bytes = 0;
};

// The optimizer protocol state of one stage within one step.
struct ChainState {
  bool grads_done = false;
  std::vector<double> square_sums;
  std::optional<double> incoming;
  bool forwarded = false;
  bool early_checked = false;  // post-validation: may_step_early was asked
  bool stepped_early = false;
};

class DeviceWorker {
 public:
  // Everything the worker produces goes to `output`, which only this worker writes.
  DeviceWorker(Backend& backend, const zb::Problem& problem, const zb::Schedule& schedule,
               const ExecOptions& options, int device, DeviceOutput& output)
      : problem_(problem),
        schedule_(schedule),
        options_(options),
        d_(device),
        device_(backend.device(device)),
        fabric_(backend.fabric()),
        output_(output) {}

  void run() {
    for (int c = 0; c < problem_.chunks; ++c) {
      const int stage = problem_.stage_of(d_, c);
      stages_.push_back(stage);
      if (two_copies()) {
        // Stage s of the down copy and p + s of the up copy hold slice s; the up copy's gradient
        // sum continues the down copy's (sync_copies).
        const int p = problem_.devices;
        const bool up = stage >= p;
        const int first = up ? problem_.microbatches / 2 : 0;
        const GradientSum sum{first, first + problem_.microbatches_through(stage), up};
        models_.push_back(std::make_unique<StageModel>(device_, options_.model, up ? stage - p : stage, p,
                                                       problem_.microbatches, sum));
      } else {
        models_.push_back(std::make_unique<StageModel>(device_, options_.model, stage,
                                                       problem_.stages(), problem_.microbatches));
      }
      optimizers_.push_back(std::make_unique<StageOptimizer>(*models_.back(), options_.optimizer));
    }
    const auto& actions = schedule_.devices[static_cast<std::size_t>(d_)];
    for (int step = 0; step < options_.steps; ++step) {
      step_ = step;
      run_step(actions);
    }
    if (options_.gather_weights) {
      for (std::size_t c = 0; c < models_.size(); ++c) {
        output_.stage_weights.emplace_back(stages_[c], models_[c]->download_weights());
      }
    }
  }

 private:
  StageModel& model(int chunk) { return *models_[static_cast<std::size_t>(chunk)]; }
  // The bidirectional placement: two copies of the model, half the microbatches through each.
  bool two_copies() const { return problem_.placement == zb::Placement::bidirectional; }
  std::uint64_t copy_losses_key(int up_last) const { return control_key(step_, up_last, ControlKind::copy_losses); }

  double live_bytes() const {
    std::size_t total = 0;
    for (const auto& m : models_) total += m->saved_bytes();
    return static_cast<double>(total);
  }

  void run_step(const std::vector<zb::Action>& actions) {
    device_.clear_events();
    for (auto& m : models_) m->begin_step();
    chain_.assign(models_.size(), ChainState{});
    std::vector<ActionRecord> records;
    std::vector<MemoryRecord> memory;
    bool partner_next = false;
    for (std::size_t i = 0; i < actions.size(); ++i) {
      const zb::Action& action = actions[i];
      if (action.chunk < 0 || action.chunk >= problem_.chunks) {
        throw ExecError(fmt::format("device {}, step {}, action #{} ({}): no chunk {}", d_, step_,
                                    i, zb::to_token(action), action.chunk));
      }
      const int stage = problem_.stage_of(d_, action.chunk);
      // An overlapped pair's parts may run concurrently (Device::begin_overlap). As in the
      // evaluator, the action after a pair's first part is its partner, whatever its own flag.
      const bool closes_pair = partner_next;
      const bool opens_pair = !closes_pair && action.overlap_next && i + 1 < actions.size();
      partner_next = opens_pair;
      try {
        if (opens_pair) device_.begin_overlap();
        if (closes_pair) device_.switch_to_partner();
        records.push_back(run_action(action, stage, memory));
        // With two copies a copy's own sum is not the gradient yet (sync_copies makes it).
        if (!two_copies() && (action.pass == zb::Pass::W || action.pass == zb::Pass::BW)) {
          if (model(action.chunk).gradients_complete()) on_gradients_complete(action.chunk);
        }
        if (options_.mode == SyncMode::post_validation) {
          // The norm partial leaves before the early update, which does not change it: the
          // update then overlaps the all-reduce (optimizer_step.h's model of this protocol).
          progress_chain(false);
          step_early(action.chunk);
        }
        if (closes_pair) device_.end_overlap();
      } catch (const std::exception& error) {
        throw ExecError(fmt::format("device {}, step {}, action #{} ({} on stage {}): {}", d_,
                                    step_, i, zb::to_token(action), stage, error.what()));
      }
    }
    try {
      if (two_copies()) sync_copies();
      for (std::size_t c = 0; c < models_.size(); ++c) {
        if (!chain_[c].grads_done) {
          throw ExecError(fmt::format("stage {} did not complete its gradients", stages_[c]));
        }
      }
      progress_chain(true);
      finish_step();
    } catch (const std::exception& error) {
      throw ExecError(fmt::format("device {}, step {}, optimizer step: {}", d_, step_, error.what()));
    }
    device_.synchronize();
    std::vector<zb::Span> spans;
    for (const auto& r : records) {
      zb::Span span;
      span.device = d_;
      span.stream = zb::is_copy(r.action.pass) ? zb::Stream::copy : zb::Stream::compute;
      span.pass = r.action.pass;
      span.stage = r.stage;
      span.microbatch = r.action.microbatch;
      span.chunk = r.action.chunk;
      span.start = device_.event_time_us(r.start_event);
      span.end = device_.event_time_us(r.end_event);
      spans.push_back(span);
    }
    std::vector<zb::MemoryPoint> points;
    for (const auto& m : memory) {
      points.push_back({device_.event_time_us(m.event), m.bytes});
      output_.peak_bytes = std::max(output_.peak_bytes, m.bytes);
    }
    output_.spans.push_back(std::move(spans));
    output_.memory_us.push_back(std::move(points));
  }

  ActionRecord run_action(const zb::Action& action, int stage, std::vector<MemoryRecord>& memory) {
    StageModel& m = model(action.chunk);
    const int mb = action.microbatch;
    // Where the microbatch enters and leaves (two copies: its copy's first and last stage).
    const zb::StagePath path = problem_.path(mb);
    ActionRecord record{action, stage, 0, 0};
    switch (action.pass) {
      case zb::Pass::F: {
        // Data loading is not part of F: upload before the clock starts.
        Tensor input;
        Tensor target;
        const auto rows = options_.model.microbatch_size;
        if (stage == path.first) {
          input = device_.alloc(rows, options_.model.hidden);
          device_.upload(input, synthetic_input(options_.model, step_, mb));
        }
        if (stage == path.last) {
          target = device_.alloc(rows, options_.model.hidden);
          device_.upload(target, synthetic_target(options_.model, step_, mb));
        }
        // Waiting for the input is idle time, not F: the clock starts once it is here.
        if (stage > path.first) {
          input = fabric_.recv(problem_.device_of_stage(stage - 1), d_,
                               MessageTag{step_, stage - 1, stage, mb}, device_);
        }
        record.start_event = device_.record_event();
        Tensor output = m.forward(mb, std::move(input), target);
        // F's activations count from its start (the memory model of docs/design.md section 3).
        memory.push_back({record.start_event, live_bytes()});
        // F ends when its output exists; the send is the transfer that follows.
        record.end_event = device_.record_event();
        if (stage < path.last) {
          fabric_.send(d_, problem_.device_of_stage(stage + 1), MessageTag{step_, stage, stage + 1, mb},
                       std::move(output));
        }
        return record;
      }
      case zb::Pass::B:
      case zb::Pass::BW: {
        Tensor grad_output;
        if (stage < path.last) {
          grad_output = fabric_.recv(problem_.device_of_stage(stage + 1), d_,
                                     MessageTag{step_, stage + 1, stage, mb}, device_);
        }
        record.start_event = device_.record_event();
        Tensor grad_input = m.backward_input(mb, std::move(grad_output));
        if (action.pass == zb::Pass::B) record.end_event = device_.record_event();
        if (stage > path.first) {
          // The input gradient goes upstream at once, before any weight-gradient work (BW).
          fabric_.send(d_, problem_.device_of_stage(stage - 1), MessageTag{step_, stage, stage - 1, mb},
                       std::move(grad_input));
        }
        if (action.pass == zb::Pass::BW) {
          m.backward_weight(mb);
          record.end_event = device_.record_event();
        }
        memory.push_back({record.end_event, live_bytes()});
        return record;
      }
      case zb::Pass::W: {
        record.start_event = device_.record_event();
        m.backward_weight(mb);
        record.end_event = device_.record_event();
        memory.push_back({record.end_event, live_bytes()});
        return record;
      }
      case zb::Pass::O:
      case zb::Pass::L: {
        record.start_event = device_.record_event();
        action.pass == zb::Pass::O ? m.offload(mb) : m.reload(mb);
        record.end_event = device_.record_event();
        memory.push_back({record.end_event, live_bytes()});
        return record;
      }
    }
    throw ExecError("unknown pass");
  }

  // Two copies: slice s's gradient is the in-order sum over every microbatch, down's first. The
  // down copy sends its partial sum to the up copy's device, which adds its own contributions in
  // microbatch order and sends the total back, so both copies hold the reference's bits. Sends
  // never block: every device sends its partials before it waits.
  void sync_copies() {
    const int p = problem_.devices;
    auto tag = [&](int from, int to, std::size_t index) { return MessageTag{step_, from, to, static_cast<int>(index)}; };
    auto send_all = [&](std::size_t c, int to_stage) {
      const int to = problem_.device_of_stage(to_stage);
      std::size_t index = 0;
      for (auto& layer : models_[c]->grads()) {
        for (auto& grad : layer) fabric_.send(d_, to, tag(stages_[c], to_stage, index++), device_.clone(grad));
      }
    };
    auto recv_all = [&](std::size_t c, int from_stage) {
      const int from = problem_.device_of_stage(from_stage);
      std::vector<Tensor> tensors;
      const std::size_t count = models_[c]->grads().size() * kParamsPerLayer;
      for (std::size_t index = 0; index < count; ++index) {
        tensors.push_back(fabric_.recv(from, d_, tag(from_stage, stages_[c], index), device_));
      }
      return tensors;
    };
    for (std::size_t c = 0; c < models_.size(); ++c) {
      if (stages_[c] < p) send_all(c, stages_[c] + p);
    }
    for (std::size_t c = 0; c < models_.size(); ++c) {
      if (stages_[c] < p) continue;
      models_[c]->continue_sum(recv_all(c, stages_[c] - p));
      send_all(c, stages_[c] - p);
    }
    for (std::size_t c = 0; c < models_.size(); ++c) {
      if (stages_[c] < p) models_[c]->take_gradients(recv_all(c, stages_[c] + p));
    }
    for (std::size_t c = 0; c < models_.size(); ++c) {
      if (!models_[c]->gradients_complete()) {
        throw ExecError(fmt::format("stage {} did not complete its gradients", stages_[c]));
      }
      on_gradients_complete(static_cast<int>(c));
    }
  }

  void on_gradients_complete(int chunk) {
    StageModel& m = model(chunk);
    ChainState& state = chain_[static_cast<std::size_t>(chunk)];
    if (state.grads_done) return;
    if (options_.inject_nonfinite && options_.inject_nonfinite->step == step_ &&
        options_.inject_nonfinite->stage == stages_[static_cast<std::size_t>(chunk)]) {
      device_.poison(m.grads()[0][kW1], 0);
    }
    state.square_sums = m.gradient_square_sums();
    state.grads_done = true;
  }

  // Post-validation: once a chunk's gradients are complete, the step a verdict of "finite, no
  // clipping" would apply, taken now (optimistically, with a snapshot to roll back to).
  void step_early(int chunk) {
    ChainState& state = chain_[static_cast<std::size_t>(chunk)];
    if (!state.grads_done || state.stepped_early || state.early_checked) return;
    state.early_checked = true;
    if (!may_step_early(state.square_sums, options_.optimizer)) return;
    auto& optimizer = *optimizers_[static_cast<std::size_t>(chunk)];
    optimizer.save_snapshot();
    optimizer.apply(StepDecision{});
    state.stepped_early = true;
  }

  // Moves the norm partial down the stages: stage s adds its squared sums to what stage s+1 sent
  // and passes the result to stage s-1; stage 0 holds the total and sends it to every device.
  // With two copies the chain runs through the down copy only (the up copy holds the same bits).
  void progress_chain(bool blocking) {
    const int last = problem_.path(0).last;
    std::vector<std::size_t> order(models_.size());
    for (std::size_t c = 0; c < order.size(); ++c) order[c] = c;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return stages_[a] > stages_[b]; });
    for (std::size_t c : order) {
      ChainState& state = chain_[c];
      const int s = stages_[c];
      if (state.forwarded || !state.grads_done) continue;
      if (s > last) {
        state.forwarded = true;
        continue;
      }
      if (!state.incoming) {
        if (s == last) {
          state.incoming = 0.0;
        } else {
          const int from = problem_.device_of_stage(s + 1);
          const auto key = control_key(step_, s, ControlKind::norm_partial);
          if (blocking) {
            state.incoming = fabric_.recv_control(from, d_, key).at(0);
          } else if (auto got = fabric_.try_recv_control(from, d_, key)) {
            state.incoming = got->at(0);
          } else {
            continue;
          }
        }
      }
      const double total = chain_square_sum(*state.incoming, state.square_sums);
      if (s > 0) {
        fabric_.send_control(d_, problem_.device_of_stage(s - 1),
                             control_key(step_, s - 1, ControlKind::norm_partial), {total});
      } else {
        for (int e = 0; e < problem_.devices; ++e) {
          fabric_.send_control(d_, e, control_key(step_, 0, ControlKind::verdict), {total});
        }
      }
      state.forwarded = true;
    }
  }

  void finish_step() {
    const double total =
        fabric_.recv_control(problem_.device_of_stage(0), d_, control_key(step_, 0, ControlKind::verdict)).at(0);
    const StepDecision decision = decide_step(total, options_.optimizer);
    int early = 0;
    int rollbacks = 0;
    for (std::size_t c = 0; c < models_.size(); ++c) {
      auto& optimizer = *optimizers_[c];
      if (chain_[c].stepped_early) {
        ++early;
        if (decision.apply && !decision.clipped) {
          optimizer.drop_snapshot();  // the early step was the right one
          continue;
        }
        optimizer.restore_snapshot();  // roll back bitwise, then redo the step correctly
        ++rollbacks;
      }
      optimizer.apply(decision);
    }
    DeviceStepOutcome outcome;
    outcome.decision = decision;
    outcome.early_steps = early;
    outcome.rollbacks = rollbacks;
    const int down_last = problem_.path(0).last;
    for (std::size_t c = 0; c < models_.size(); ++c) {
      const StageModel& m = *models_[c];
      if (!m.is_last()) continue;
      if (stages_[c] != down_last) {
        // The up copy's losses go to the down copy's last stage, which adds them after its own,
        // in microbatch order, as the reference does.
        fabric_.send_control(d_, problem_.device_of_stage(down_last), copy_losses_key(stages_[c]), m.losses());
        continue;
      }
      outcome.has_loss = true;
      outcome.loss_sum = m.loss_sum();
      if (two_copies()) {
        const int up_last = problem_.stages() - 1;
        const std::vector<double> up =
            fabric_.recv_control(problem_.device_of_stage(up_last), d_, copy_losses_key(up_last));
        for (int mb = problem_.microbatches / 2; mb < problem_.microbatches; ++mb) {
          outcome.loss_sum += up.at(static_cast<std::size_t>(mb));
        }
      }
    }
    output_.steps.push_back(outcome);
  }

  const zb::Problem& problem_;
  const zb::Schedule& schedule_;
  const ExecOptions& options_;
  int d_;
  Device& device_;
  Fabric& fabric_;
  DeviceOutput& output_;
  std::vector<int> stages_;  // the stage of each chunk (models_ name their copy's slice)
  std::vector<std::unique_ptr<StageModel>> models_;
  std::vector<std::unique_ptr<StageOptimizer>> optimizers_;
  std::vector<ChainState> chain_;
  int step_ = 0;
};

// The first action's start on any device in a step, in us on the devices' shared epoch.
double step_origin_us(const std::vector<DeviceOutput>& outputs, int step) {
  double origin_us = std::numeric_limits<double>::infinity();
  for (const auto& out : outputs) {
    for (const auto& span : out.spans[static_cast<std::size_t>(step)]) origin_us = std::min(origin_us, span.start);
  }
  return std::isfinite(origin_us) ? origin_us : 0.0;
}

zb::Trace build_trace(const std::vector<DeviceOutput>& outputs, int step, const zb::Schedule& schedule,
                      const std::string& engine) {
  zb::Trace trace;
  trace.meta.schedule = schedule.name;
  trace.meta.engine = engine;
  trace.meta.time_unit = zb::TimeUnit::ms;
  trace.meta.memory_unit = "bytes";  // the tracker counts bytes
  trace.devices = static_cast<int>(outputs.size());
  const double origin_us = step_origin_us(outputs, step);
  std::vector<double> busy(outputs.size(), 0.0);
  for (std::size_t d = 0; d < outputs.size(); ++d) {
    for (zb::Span span : outputs[d].spans[static_cast<std::size_t>(step)]) {
      span.start = (span.start - origin_us) / 1000.0;
      span.end = (span.end - origin_us) / 1000.0;
      busy[d] += span.end - span.start;
      trace.spans.push_back(span);
    }
    std::vector<zb::MemoryPoint> points;
    for (auto point : outputs[d].memory_us[static_cast<std::size_t>(step)]) {
      point.time = (point.time - origin_us) / 1000.0;
      points.push_back(point);
    }
    trace.memory.push_back(std::move(points));
  }
  // A measured run has no cost model: the busiest device's compute time is the bubble-free work.
  const double work = busy.empty() ? 0.0 : *std::max_element(busy.begin(), busy.end());
  trace.metrics = zb::compute_metrics(trace, work);
  return trace;
}

}  // namespace

zb::Trace all_steps_trace(const ExecResult& result) {
  if (result.traces.empty()) return {};
  zb::Trace all = result.traces.front();
  all.spans.clear();
  for (auto& points : all.memory) points.clear();
  for (std::size_t k = 0; k < result.traces.size(); ++k) {
    const double origin = result.step_origins_ms.at(k);
    const zb::Trace& step = result.traces[k];
    for (zb::Span span : step.spans) {
      span.step = static_cast<std::int32_t>(k);
      span.start += origin;
      span.end += origin;
      all.spans.push_back(span);
    }
    for (std::size_t d = 0; d < step.memory.size() && d < all.memory.size(); ++d) {
      for (zb::MemoryPoint point : step.memory[d]) {
        point.time += origin;
        all.memory[d].push_back(point);
      }
    }
  }
  // The first step's spans are those of result.traces[0]: its metrics stand.
  return all;
}

ExecResult run_schedule(Backend& backend, const zb::Problem& problem, const zb::Schedule& schedule,
                        const ExecOptions& options) {
  problem.validate();
  if (schedule.device_count() != problem.devices) {
    throw InputError(fmt::format("schedule '{}' has {} devices but the problem has p = {}",
                                 schedule.name, schedule.device_count(), problem.devices));
  }
  // The CUDA fabric prepares NCCL channels for stage boundaries only, not the copies' exchange.
  if (problem.placement == zb::Placement::bidirectional && backend.name() == "cuda") {
    throw InputError(fmt::format("schedule '{}': the cuda backend does not run placement bidirectional yet (its "
                                 "fabric has no channel between a slice's two copies); use --backend cpu",
                                 schedule.name));
  }
  if (backend.device_count() != problem.devices) {
    throw InputError(fmt::format("backend '{}' has {} devices but the problem has p = {}",
                                 backend.name(), backend.device_count(), problem.devices));
  }
  if (options.steps < 1) throw InputError(fmt::format("--steps {}: need at least 1", options.steps));
  // Two copies split the layers into p slices, one model into p * v stages.
  options.model.validate(problem.placement == zb::Placement::bidirectional ? problem.devices : problem.stages());
  options.optimizer.validate();
  if (options.inject_nonfinite && (options.inject_nonfinite->step >= options.steps ||
                                   options.inject_nonfinite->stage >= problem.stages())) {
    throw InputError(fmt::format("--inject-nonfinite {}:{}: step must be < {} and stage < {}",
                                 options.inject_nonfinite->step, options.inject_nonfinite->stage,
                                 options.steps, problem.stages()));
  }
  // Refuses deadlocks (with the grid report), out-of-order channels and over-limit schedules
  // before anything runs, in the words zbsim uses.
  zb::validate(problem, schedule, zb::MemoryCheck::against_limit,
               options.check_channel_order ? zb::ChannelCheck::fifo : zb::ChannelCheck::skip);

  std::vector<int> stage_device;
  for (int stage = 0; stage < problem.stages(); ++stage) stage_device.push_back(problem.device_of_stage(stage));
  backend.prepare_channels(stage_device);

  std::vector<DeviceOutput> outputs(static_cast<std::size_t>(problem.devices));
  const bool gathers = backend.is_local(0);  // device 0's process assembles the results
  backend.run_on_devices([&](int d) {
    DeviceWorker worker(backend, problem, schedule, options, d, outputs[static_cast<std::size_t>(d)]);
    worker.run();
    // A multi-process run: every device's output travels to device 0 (spans, memory, outcomes,
    // weights), once, after its last step.
    if (!gathers) {
      backend.fabric().send_control(d, 0, control_key(0, d, ControlKind::gather),
                                    encode(outputs[static_cast<std::size_t>(d)]));
    } else if (d == 0) {
      for (int e = 0; e < problem.devices; ++e) {
        if (backend.is_local(e)) continue;
        outputs[static_cast<std::size_t>(e)] = decode_device_output(
            backend.fabric().recv_control(e, 0, control_key(0, e, ControlKind::gather)), e);
      }
    }
  });

  ExecResult result;
  if (!gathers) return result;  // the results are device 0's process's to report
  result.gathered = true;
  for (int step = 0; step < options.steps; ++step) {
    StepReport report;
    for (const DeviceOutput& out : outputs) {
      const DeviceStepOutcome& outcome = out.steps.at(static_cast<std::size_t>(step));
      report.decision = outcome.decision;  // every device applied the same verdict
      report.early_steps += outcome.early_steps;
      report.rollbacks += outcome.rollbacks;
      if (outcome.has_loss) {
        report.loss = outcome.loss_sum / static_cast<double>(problem.microbatches) /
                      static_cast<double>(options.model.microbatch_size) /
                      static_cast<double>(options.model.hidden);
      }
    }
    result.steps.push_back(report);
    result.traces.push_back(build_trace(outputs, step, schedule, backend.name()));
    result.step_origins_ms.push_back((step_origin_us(outputs, step) - step_origin_us(outputs, 0)) / 1000.0);
  }
  for (const auto& out : outputs) result.peak_activation_bytes.push_back(out.peak_bytes);
  if (options.gather_weights) {
    std::vector<const ModelWeights*> by_stage(static_cast<std::size_t>(problem.stages()), nullptr);
    for (const auto& out : outputs) {
      for (const auto& [stage, layers] : out.stage_weights) by_stage.at(static_cast<std::size_t>(stage)) = &layers;
    }
    for (const ModelWeights* layers : by_stage) {
      if (layers == nullptr) throw ExecError("a stage's weights did not reach device 0 (its process kept them)");
    }
    // Two copies: the model is the down copy, and the up copy must hold the same bits.
    const int model_stages = problem.path(0).last + 1;
    for (int s = model_stages; s < problem.stages(); ++s) {
      if (*by_stage[static_cast<std::size_t>(s)] != *by_stage[static_cast<std::size_t>(s - model_stages)]) {
        throw ExecError(fmt::format("the up copy's stage {} differs from the down copy's stage {} after the run", s,
                                    s - model_stages));
      }
    }
    for (int s = 0; s < model_stages; ++s) {
      const ModelWeights* layers = by_stage[static_cast<std::size_t>(s)];
      result.weights.insert(result.weights.end(), layers->begin(), layers->end());
    }
  }
  return result;
}

}  // namespace zb::exec
