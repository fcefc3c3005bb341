// List-scheduling evaluator: exact start/end of every action, in time linear in the schedule.
#include "sim/schedule/evaluator.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "sim/schedule/deadlock_report.h"
#include "sim/schedule/error.h"
#include "sim/schedule/memory.h"
#include "sim/schedule/pass_time.h"

namespace zb {

namespace {

constexpr double kNotDone = -1.0;  // times are >= 0, so a negative end marks "not finished yet"

struct DeviceState {
  std::size_t next = 0;  // index of the next action to run
  double clock = 0;      // when the device is free
  double first_start = std::numeric_limits<double>::infinity();
  double last_end = 0;
  double busy = 0;
  double memory = 0;
  double peak_memory = 0;
  bool queued = true;  // in the worklist (or running)
};

// What the hot loop needs of the problem, looked up once per evaluation instead of through
// Problem's functions per action (each action would otherwise call stage_of, path, comm_after,
// device_of_stage, pass_time and memory_delta, none of them inlined across translation units).
struct StageTables {
  explicit StageTables(const Problem& problem)
      : chunks(problem.chunks),
        stage_of(static_cast<std::size_t>(problem.devices) * problem.chunks),
        device_of(static_cast<std::size_t>(problem.stages())),
        comm_after(static_cast<std::size_t>(problem.stages())),
        pass_time(static_cast<std::size_t>(problem.stages()) * kPassCount),
        memory(static_cast<std::size_t>(problem.stages()) * kPassCount),
        path(static_cast<std::size_t>(problem.microbatches)) {
    for (int d = 0; d < problem.devices; ++d) {
      for (int c = 0; c < chunks; ++c) stage_of[static_cast<std::size_t>(d) * chunks + c] = problem.stage_of(d, c);
    }
    for (int s = 0; s < problem.stages(); ++s) {
      const auto i = static_cast<std::size_t>(s);
      device_of[i] = problem.device_of_stage(s);
      comm_after[i] = problem.comm_after(s);
      for (int k = 0; k < kPassCount; ++k) {
        pass_time[i * kPassCount + k] = zb::pass_time(problem, static_cast<Pass>(k), s);
        memory[i * kPassCount + k] = memory_delta(problem, static_cast<Pass>(k), s);
      }
    }
    for (int mb = 0; mb < problem.microbatches; ++mb) path[static_cast<std::size_t>(mb)] = problem.path(mb);
  }

  // The caller has checked 0 <= chunk < chunks.
  int stage(int device, int chunk) const { return stage_of[static_cast<std::size_t>(device) * chunks + chunk]; }
  double time(Pass pass, int stage) const { return pass_time[index(pass, stage)]; }
  const MemoryDelta& delta(Pass pass, int stage) const { return memory[index(pass, stage)]; }
  static std::size_t index(Pass pass, int stage) {
    return static_cast<std::size_t>(stage) * kPassCount + static_cast<std::size_t>(pass);
  }

  int chunks;
  std::vector<int> stage_of;        // [device * chunks + chunk]
  std::vector<int> device_of;       // per stage
  std::vector<double> comm_after;   // per stage: Problem::comm_after
  std::vector<double> pass_time;    // [stage * kPassCount + pass]
  std::vector<MemoryDelta> memory;  // [stage * kPassCount + pass]
  std::vector<StagePath> path;      // per microbatch
};

class Evaluation {
 public:
  Evaluation(const Problem& problem, const Schedule& schedule, const EvalOptions& options)
      : problem_(problem),
        schedule_(schedule),
        m_(problem.microbatches),
        stages_(problem.stages()),
        tables_(problem),
        end_f_(static_cast<std::size_t>(stages_) * m_, kNotDone),
        end_b_(static_cast<std::size_t>(stages_) * m_, kNotDone),
        last_weight_grad_start_(static_cast<std::size_t>(stages_), 0.0),
        devices_(problem.devices),
        options_(options) {
    if (schedule.device_count() != problem.devices) {
      throw ScheduleError(fmt::format("schedule '{}' has {} devices but the problem has p={}", schedule.name,
                                      schedule.device_count(), problem.devices));
    }
    if (options.steps < 1) throw InputError(fmt::format("evaluator: steps is {}: need at least 1", options.steps));
    const auto steps = static_cast<std::size_t>(options.steps);
    // Every span goes straight to its final place in one vector: device d's compute spans of
    // every step start at offset_[d], then come each device's transfers, written at
    // transfer_cursor_[d]. (Recording per device and laying out at the end measured slower: the
    // copy costs more than the fill.)
    offset_.resize(problem.devices + 1, 0);
    for (int d = 0; d < problem.devices; ++d) offset_[d + 1] = offset_[d] + steps * schedule.devices[d].size();
    std::size_t total = offset_.back();
    if (options.record_spans && options.record_transfers) {
      const std::vector<std::size_t> counts = transfer_counts();
      transfer_cursor_.resize(problem.devices);
      for (int d = 0; d < problem.devices; ++d) {
        transfer_cursor_[d] = total;
        total += steps * counts[d];
      }
    }
    // Filled from one value: resize() value-initialises span by span, a memset call each.
    if (options.record_spans) spans_.assign(total, Span{});
    if (options.record_memory) {
      memory_.resize(problem.devices);
      for (int d = 0; d < problem.devices; ++d) {
        memory_[d].reserve(steps * schedule.devices[d].size() + 1);
        memory_[d].push_back({0.0, 0.0});
      }
    }
  }

  Trace run() {
    std::vector<double> gradients_ready(devices_.size());
    for (step_ = 0; step_ < options_.steps; ++step_) {
      run_step();
      for (std::size_t d = 0; d < devices_.size(); ++d) {
        gradients_ready[d] = zb::gradients_ready(problem_, static_cast<int>(d), devices_[d].last_end,
                                                 last_weight_grad_start_);
      }
      if (step_ == 0) first_step_ = devices_;
      // The next step starts on each device once its optimizer step lets it.
      const StepBoundary boundary = step_boundary(problem_, gradients_ready, options_.optimizer);
      step_ends_.push_back(*std::max_element(boundary.ready.begin(), boundary.ready.end()));
      for (std::size_t d = 0; d < devices_.size(); ++d) {
        DeviceState& state = devices_[d];
        state.next = 0;
        state.queued = true;
        state.clock = state.last_end = boundary.ready[d];
      }
      std::fill(end_f_.begin(), end_f_.end(), kNotDone);
      std::fill(end_b_.begin(), end_b_.end(), kNotDone);
    }
    return finish();
  }

 private:
  void run_step() {
    std::vector<int> worklist(devices_.size());
    for (std::size_t d = 0; d < devices_.size(); ++d) worklist[d] = static_cast<int>(devices_.size() - 1 - d);
    while (!worklist.empty()) {
      const int d = worklist.back();
      worklist.pop_back();
      advance(d, worklist);
    }
    std::vector<std::size_t> position(devices_.size());
    bool stuck = false;
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      position[d] = devices_[d].next;
      stuck |= devices_[d].next < schedule_.devices[d].size();
    }
    if (stuck) {
      throw ScheduleError(fmt::format("schedule '{}' deadlocks\n{}", schedule_.name,
                                      deadlock_report(problem_, schedule_, position)));
    }
  }

  // Runs device d until it finishes or needs an input that is not ready yet. An overlapped pair
  // starts once both parts' inputs are ready; both outputs exist when the block ends.
  void advance(int d, std::vector<int>& worklist) {
    DeviceState& state = devices_[d];
    state.queued = false;
    const auto& actions = schedule_.devices[d];
    while (state.next < actions.size()) {
      const Action& action = actions[state.next];
      const bool pair = action.overlap_next && state.next + 1 < actions.size();
      const double ready = input_ready(d, state.next);
      if (ready < 0) return;
      if (!pair) {
        const int stage = tables_.stage(d, action.chunk);
        const double start = std::max(state.clock, ready);
        run(d, state.next, start, start + tables_.time(action.pass, stage), worklist);
        continue;
      }
      const Action& partner = actions[state.next + 1];
      const double partner_ready = input_ready(d, state.next + 1);
      if (partner_ready < 0) return;
      const BlockTimes block = overlapped_times(problem_, action.pass, tables_.stage(d, action.chunk), partner.pass,
                                                tables_.stage(d, partner.chunk));
      const double start = std::max({state.clock, ready, partner_ready});
      run(d, state.next, start, start + block.first, worklist, start + block.total());
      run(d, state.next, start + block.first, start + block.total(), worklist);
    }
  }

  // When the input of device d's action `step` is ready (without t_comm for local inputs), or
  // kNotDone. Refuses actions outside the problem.
  [[gnu::always_inline]] double input_ready(int d, std::size_t step) const {
    const Action& action = schedule_.devices[d][step];
    if (action.chunk < 0 || action.chunk >= problem_.chunks || action.microbatch < 0 || action.microbatch >= m_) {
      refuse_outside(d, step);
    }
    const int stage = tables_.stage(d, action.chunk);
    const StagePath path = tables_.path[static_cast<std::size_t>(action.microbatch)];
    if (!path.contains(stage)) refuse_outside(d, step);
    const std::size_t key = static_cast<std::size_t>(stage) * m_ + action.microbatch;
    switch (action.pass) {
      case Pass::F: {
        if (stage == path.first) return 0;
        const double input = end_f_[key - m_];
        return input < 0 ? kNotDone : input + tables_.comm_after[static_cast<std::size_t>(stage - 1)];
      }
      case Pass::B:
      case Pass::BW: {
        if (stage == path.last) return end_f_[key];
        const double grad = end_b_[key + m_];
        return grad < 0 ? kNotDone : grad + tables_.comm_after[static_cast<std::size_t>(stage)];
      }
      case Pass::W: return end_b_[key];
    }
    return kNotDone;
  }

  // Out of line, so that the hot input_ready() keeps no state alive for the error's text.
  [[noreturn, gnu::noinline, gnu::cold]] void refuse_outside(int d, std::size_t step) const {
    const Action& action = schedule_.devices[d][step];
    if (action.chunk < 0 || action.chunk >= problem_.chunks || action.microbatch < 0 || action.microbatch >= m_) {
      throw ScheduleError(fmt::format("schedule '{}': d{} step {}: action {} is outside the problem (m={}, "
                                      "chunks={})",
                                      schedule_.name, d, step, to_token(action), m_, problem_.chunks));
    }
    const int stage = tables_.stage(d, action.chunk);
    const StagePath path = tables_.path[static_cast<std::size_t>(action.microbatch)];
    throw ScheduleError(fmt::format("schedule '{}': d{} step {}: action {} is outside the problem (microbatch {} "
                                    "runs stages {}..{}, not stage {})",
                                    schedule_.name, d, step, to_token(action), action.microbatch, path.first,
                                    path.last, stage));
  }

  // Records device d's next action as running [start, end] and publishes its output at
  // `output_at` (the end of its block: a pair's first part hands over with the second).
  [[gnu::always_inline]] void run(int d, std::size_t step, double start, double end, std::vector<int>& worklist,
                                  double output_at = -1) {
    DeviceState& state = devices_[d];
    const Action& action = schedule_.devices[d][step];
    const int stage = tables_.stage(d, action.chunk);
    const std::size_t key = static_cast<std::size_t>(stage) * m_ + action.microbatch;
    if (output_at < 0) output_at = end;
    state.clock = std::max(end, output_at);
    state.first_start = std::min(state.first_start, start);
    state.last_end = state.clock;
    state.busy += end - start;
    record(d, step, action, stage, start, end);
    if (action.pass == Pass::W || action.pass == Pass::BW) last_weight_grad_start_[static_cast<std::size_t>(stage)] = start;
    ++state.next;
    // Wake the device that consumes this output across a device boundary.
    const StagePath path = tables_.path[static_cast<std::size_t>(action.microbatch)];
    if (action.pass == Pass::F) {
      end_f_[key] = output_at;
      if (stage < path.last) wake(tables_.device_of[static_cast<std::size_t>(stage + 1)], d, worklist);
      if (stage < path.last && !transfer_cursor_.empty()) transfer(Pass::F, action, stage, stage + 1, output_at);
    } else if (action.pass != Pass::W) {
      end_b_[key] = output_at;
      if (stage > path.first) wake(tables_.device_of[static_cast<std::size_t>(stage - 1)], d, worklist);
      if (stage > path.first && !transfer_cursor_.empty()) transfer(action.pass, action, stage, stage - 1, output_at);
    }
  }

  void wake(int consumer, int producer, std::vector<int>& worklist) {
    if (consumer == producer || devices_[consumer].queued) return;
    devices_[consumer].queued = true;
    worklist.push_back(consumer);
  }

  // Per device: how many send and recv spans it will get (transfers across devices with t_comm > 0).
  std::vector<std::size_t> transfer_counts() const {
    std::vector<std::size_t> counts(problem_.devices, 0);
    for (int d = 0; d < problem_.devices; ++d) {
      for (const Action& action : schedule_.devices[d]) {
        if (action.chunk < 0 || action.chunk >= problem_.chunks || action.microbatch < 0 || action.microbatch >= m_) {
          continue;  // refused when it is reached
        }
        const int stage = tables_.stage(d, action.chunk);
        const StagePath path = tables_.path[static_cast<std::size_t>(action.microbatch)];
        const bool forward = action.pass == Pass::F;
        if (!path.contains(stage)) continue;  // refused when it is reached
        if (action.pass == Pass::W || (forward && stage >= path.last) || (!forward && stage <= path.first)) continue;
        const int other = forward ? stage + 1 : stage - 1;
        if (tables_.comm_after[static_cast<std::size_t>(std::min(stage, other))] <= 0) continue;
        ++counts[d];
        ++counts[tables_.device_of[static_cast<std::size_t>(other)]];
      }
    }
    return counts;
  }

  void transfer(Pass pass, const Action& action, int from_stage, int to_stage, double ready) {
    const double delay = tables_.comm_after[static_cast<std::size_t>(std::min(from_stage, to_stage))];
    if (delay <= 0) return;
    const int from = tables_.device_of[static_cast<std::size_t>(from_stage)];
    const int to = tables_.device_of[static_cast<std::size_t>(to_stage)];
    spans_[transfer_cursor_[from]++] =
        {from, Stream::send, pass, from_stage, action.microbatch, action.chunk, ready, ready + delay, false, step_};
    spans_[transfer_cursor_[to]++] =
        {to, Stream::recv, pass, from_stage, action.microbatch, action.chunk, ready, ready + delay, false, step_};
  }

  [[gnu::always_inline]] void record(int d, std::size_t step, const Action& action, int stage, double start,
                                     double end) {
    if (!spans_.empty()) {
      const std::size_t index = offset_[d] + static_cast<std::size_t>(step_) * schedule_.devices[d].size() + step;
      spans_[index] = {d, Stream::compute, action.pass, stage, action.microbatch, action.chunk, start, end,
                       action.overlap_next, step_};
    }
    DeviceState& state = devices_[d];
    const MemoryDelta& delta = tables_.delta(action.pass, stage);
    if (delta.at_start != 0) {
      state.memory += delta.at_start;
      if (!memory_.empty()) memory_[d].push_back({start, state.memory});
    }
    state.peak_memory = std::max(state.peak_memory, state.memory);
    if (delta.at_end != 0) {
      state.memory += delta.at_end;
      if (!memory_.empty()) memory_[d].push_back({end, state.memory});
    }
  }

  Trace finish() {
    Trace trace;
    trace.meta.schedule = schedule_.name;
    trace.meta.engine = "eval";
    trace.meta.time_unit = problem_.time_unit;
    trace.devices = problem_.devices;
    trace.spans = std::move(spans_);
    trace.memory = std::move(memory_);
    trace.step_ends = std::move(step_ends_);

    Metrics& metrics = trace.metrics;
    const std::size_t p = devices_.size();
    metrics.device_span.resize(p);
    metrics.busy.resize(p);
    metrics.idle.resize(p);
    metrics.peak_memory.resize(p);
    for (std::size_t d = 0; d < p; ++d) {
      const DeviceState& state = first_step_[d];
      const bool ran = state.next > 0;
      metrics.device_span[d] = ran ? state.last_end - state.first_start : 0.0;
      metrics.busy[d] = state.busy;
      metrics.peak_memory[d] = state.peak_memory;
      metrics.makespan = std::max(metrics.makespan, state.last_end);
      metrics.span = std::max(metrics.span, metrics.device_span[d]);
    }
    for (std::size_t d = 0; d < p; ++d) metrics.idle[d] = metrics.makespan - metrics.busy[d];
    metrics.work = compute_work(problem_, schedule_);
    metrics.bubble_rate = metrics.span > 0 ? (metrics.span - metrics.work) / metrics.span : 0.0;
    return trace;
  }

  const Problem& problem_;
  const Schedule& schedule_;
  const int m_;
  const int stages_;
  const StageTables tables_;
  std::vector<double> end_f_;  // [stage * m + microbatch]
  std::vector<double> end_b_;  // end of B or BW
  std::vector<double> last_weight_grad_start_;  // per stage: start of its latest W or BW (data parallelism)
  std::vector<DeviceState> devices_;
  std::vector<DeviceState> first_step_;  // devices_ at the end of the first step: the metrics
  const EvalOptions& options_;
  int step_ = 0;
  std::vector<double> step_ends_;
  std::vector<std::size_t> offset_;           // first compute span of each device
  std::vector<std::size_t> transfer_cursor_;  // next transfer span of each device; empty: not recorded
  std::vector<Span> spans_;                   // the trace's spans; empty when not recorded
  std::vector<std::vector<MemoryPoint>> memory_;
};

}  // namespace

Trace evaluate(const Problem& problem, const Schedule& schedule, const EvalOptions& options) {
  return Evaluation(problem, schedule, options).run();
}

}  // namespace zb
