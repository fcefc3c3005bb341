// Compute actors (one per device, its action list in order) exchanging eager messages over the platform.
#include "sim/simgrid/detail/simulation.h"

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <deque>
#include <map>

#include "sim/core/deadlock_report.h"
#include "sim/support/error.h"
#include "sim/core/memory.h"
#include "sim/simgrid/detail/platform.h"

namespace zb::engine {

namespace sg4 = simgrid::s4u;

namespace {

constexpr double kNotYet = -1.0;  // simulated times are >= 0

double cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// Messages carry (key, pass) packed into the payload pointer: no allocation per message. The key
// is step * m + microbatch for activations and gradients, the step for all-reduce messages.
// Never null: SimGrid tells a sender from a receiver by a non-null source buffer.
void* pack(std::size_t key, Pass pass) {
  return reinterpret_cast<void*>((static_cast<std::uintptr_t>(key + 1) << 2) | static_cast<std::uintptr_t>(pass));
}
long long key_of(void* payload) { return static_cast<long long>(reinterpret_cast<std::uintptr_t>(payload) >> 2) - 1; }
Pass pass_of(void* payload) { return static_cast<Pass>(reinterpret_cast<std::uintptr_t>(payload) & 3U); }

// One in-order send stream from a device to one peer (cluster mode with fifo_sends).
struct SendStream {
  struct Pending {
    int channel;
    std::size_t key;  // step * m + microbatch
    Pass pass;
  };
  std::deque<Pending> queue;
  sg4::ActorPtr actor;
  bool idle = false;  // suspended, waiting for the next message
};

struct DeviceRun {
  int step = 0;              // the training step it is in
  std::size_t position = 0;  // next action of the step; == list size once the step is done
  bool finished = false;     // every step done
  std::string error;          // an exception caught inside the actor
  int waiting_channel = -1;   // what a blocked device waits for (deadlock report)
  int waiting_microbatch = 0;
  std::vector<Span> compute;
  std::vector<Span> transfers;  // send spans (as producer) and recv spans (as consumer)
  std::vector<double> gradients_ready;  // per step: end of its last action
  std::vector<double> verdict;          // per step: when the all-reduced norm arrived
  std::vector<double> ready;            // per step: when its update was final
  simgrid::s4u::SemaphorePtr gradients_done;  // released by the device once per step
  simgrid::s4u::SemaphorePtr verdict_known;   // released by its validator once per step
};

class Simulation {
 public:
  Simulation(const Problem& problem, const Schedule& schedule, const EnginePlan& plan, const SimgridOptions& options)
      : problem_(problem), schedule_(schedule), plan_(plan), options_(options) {}

  SimgridResult run() {
    const double cpu_start = cpu_seconds();
    if (!options_.verbose) xbt_log_control_set("root.thres:critical");
    int argc = 1;
    char name[] = "zbsim-simgrid";
    char* argv[] = {name, nullptr};
    // Never deleted: the child exits right after, and SimGrid's teardown is not needed.
    auto* engine = new sg4::Engine(&argc, argv);
    // Actors (a device each, a stream per channel) only loop over their actions: 1 MiB of stack
    // instead of SimGrid's 8 keeps the largest allowed run (catalog/engines.cpp) in 3 GiB.
    sg4::Engine::set_config("contexts/stack-size:1024");
    platform_ = build_platform(problem_, plan_, options_.cluster, options_.grad_norm_bytes);
    to_units_ = 1.0 / platform_.seconds_per_unit;

    const auto p = static_cast<std::size_t>(problem_.devices);
    const auto keys = static_cast<std::size_t>(options_.steps) * static_cast<std::size_t>(problem_.microbatches);
    devices_.resize(p);
    for (DeviceRun& run : devices_) {
      run.gradients_done = sg4::Semaphore::create(0);
      run.verdict_known = sg4::Semaphore::create(0);
    }
    for (std::size_t c = 0; c < plan_.channels.size(); ++c) {
      channel_boxes_.push_back(sg4::Mailbox::by_name(fmt::format("channel{}", c)));
    }
    arrival_.assign(plan_.channels.size(), std::vector<double>(keys, kNotYet));
    sent_at_.assign(plan_.channels.size(), std::vector<double>(keys, kNotYet));
    for (int s = 0; s < problem_.stages(); ++s) partial_boxes_.push_back(sg4::Mailbox::by_name(fmt::format("partial{}", s)));
    for (std::size_t d = 0; d < p; ++d) verdict_boxes_.push_back(sg4::Mailbox::by_name(fmt::format("verdict{}", d)));
    std::vector<sg4::ActorPtr> actors;
    std::vector<sg4::ActorPtr> validators;
    for (std::size_t d = 0; d < p; ++d) {
      actors.push_back(sg4::Actor::create(fmt::format("device{}", d), platform_.hosts[d],
                                          [this, d] { device_main(static_cast<int>(d)); }));
      validators.push_back(sg4::Actor::create(fmt::format("validator{}", d), platform_.control_hosts[d],
                                              [this, d] { validator_main(static_cast<int>(d)); }));
    }
    stream_of_channel_.assign(plan_.channels.size(), -1);
    if (options_.cluster && options_.fifo_sends) {
      std::map<std::pair<int, int>, int> stream_of_pair;
      for (std::size_t c = 0; c < plan_.channels.size(); ++c) {
        const Channel& channel = plan_.channels[c];
        auto [it, inserted] =
            stream_of_pair.emplace(std::pair{channel.producer, channel.consumer}, static_cast<int>(streams_.size()));
        if (inserted) streams_.emplace_back();
        stream_of_channel_[c] = it->second;
      }
      for (const auto& [pair, index] : stream_of_pair) {
        const auto stream = static_cast<std::size_t>(index);
        streams_[stream].actor =
            sg4::Actor::create(fmt::format("stream{}-{}", pair.first, pair.second),
                               platform_.hosts[static_cast<std::size_t>(pair.first)], [this, stream] { stream_main(stream); });
      }
    }
    // Eager transfers: a message travels as soon as it is sent, whether or not its consumer
    // is already waiting, exactly like the evaluator's "ready + t_comm".
    for (std::size_t c = 0; c < plan_.channels.size(); ++c) {
      channel_boxes_[c]->set_receiver(actors[static_cast<std::size_t>(plan_.channels[c].consumer)]);
    }
    for (int s = 0; s < problem_.stages(); ++s) {
      partial_boxes_[static_cast<std::size_t>(s)]->set_receiver(validators[static_cast<std::size_t>(problem_.device_of_stage(s))]);
    }
    for (std::size_t d = 0; d < p; ++d) verdict_boxes_[d]->set_receiver(validators[d]);
    engine->run();
    SimgridResult result = collect();
    result.engine_cpu_seconds = cpu_seconds() - cpu_start;
    return result;
  }

 private:
  // The device's steps; between two, its optimizer step (optimizer_step.h's step_boundary).
  void device_main(int d) {
    DeviceRun& run = devices_[static_cast<std::size_t>(d)];
    const double update = problem_.optimizer_time(d) * platform_.flops_per_unit;
    try {
      for (run.step = 0; run.step < options_.steps; ++run.step) {
        if (!run_actions(d, run)) return;
        // Data parallelism: the gradient all-reduce of d's stages, on d's communication stream
        // (optimizer_step.h), may end after the last action.
        const double ready = gradients_ready(problem_, d, sg4::Engine::get_clock() * to_units_, last_weight_grad_start_);
        if (ready > sg4::Engine::get_clock() * to_units_) sg4::this_actor::sleep_until(ready / to_units_);
        run.gradients_ready.push_back(ready);
        run.gradients_done->release();
        const OptimizerStep& optimizer = options_.optimizer;
        const bool sync = optimizer.mode == OptimizerMode::sync;
        if (!sync && update > 0) sg4::this_actor::execute(update);  // the early update
        if (sync || optimizer.rollback || optimizer.await_verdict) run.verdict_known->acquire();
        // Sync: the update after the verdict. A rollback: the early update restored and redone.
        if ((sync || optimizer.rollback) && update > 0) sg4::this_actor::execute(update);
        run.ready.push_back(sg4::Engine::get_clock() * to_units_);
      }
      run.finished = true;
    } catch (const std::exception& error) {
      // Only our own errors: SimGrid's kill of a deadlocked actor is not a std::exception and
      // must keep unwinding.
      run.error = error.what();
    }
  }

  // One step's action list; false when the device is stuck for good.
  bool run_actions(int d, DeviceRun& run) {
    const auto& actions = plan_.devices[static_cast<std::size_t>(d)];
    const std::size_t base = static_cast<std::size_t>(run.step) * static_cast<std::size_t>(problem_.microbatches);
    const double flops_per_unit = platform_.flops_per_unit;
    run.compute.reserve(actions.size() * static_cast<std::size_t>(options_.steps));
    for (std::size_t step = 0; step < actions.size(); ++step) {
      run.position = step;
      // An overlapped pair is one block: both inputs first, one execution, both outputs after.
      const std::size_t parts = actions[step].action.overlap_next && step + 1 < actions.size() ? 2 : 1;
      double time = 0;
      for (std::size_t k = step; k < step + parts; ++k) {
        const PlannedAction& item = actions[k];
        if (item.input == InputKind::never) return false;  // stuck for good: reported after the run
        if (item.input == InputKind::channel) wait_for(run, item.input_channel, base, item.action.microbatch);
        time += item.time;
      }
      const double start = sg4::Engine::get_clock();
      if (time > 0) sg4::this_actor::execute(time * flops_per_unit);
      ++activities_;
      double part_start = start * to_units_;
      for (std::size_t k = step; k < step + parts; ++k) {
        const PlannedAction& item = actions[k];
        // The first part's share ends inside the block; the block's last part ends at the clock.
        const double part_end = k + 1 == step + parts ? sg4::Engine::get_clock() * to_units_ : part_start + item.time;
        run.compute.push_back({d, Stream::compute, item.action.pass, parts == 2 && k == step, item.stage,
                               item.action.microbatch, item.action.chunk, run.step, part_start, part_end});
        if (item.action.pass == Pass::W || item.action.pass == Pass::BW) {
          last_weight_grad_start_[static_cast<std::size_t>(item.stage)] = part_start;
        }
        part_start = part_end;
      }
      for (std::size_t k = step; k < step + parts; ++k) {
        const PlannedAction& item = actions[k];
        if (item.output_channel >= 0) send(item.output_channel, base + static_cast<std::size_t>(item.action.microbatch), item.action.pass);
      }
      step += parts - 1;
    }
    run.position = actions.size();
    return true;
  }

  // Sends an output: at once (a detached eager message that overlaps the following compute), or
  // through the in-order stream to that peer.
  void send(int channel_index, std::size_t key, Pass pass) {
    const auto channel = static_cast<std::size_t>(channel_index);
    ++activities_;
    const int stream_index = stream_of_channel_[channel];
    if (stream_index < 0) {
      sent_at_[channel][key] = sg4::Engine::get_clock();
      channel_boxes_[channel]->put_init(pack(key, pass), platform_.activation_bytes)->detach();
      return;
    }
    SendStream& stream = streams_[static_cast<std::size_t>(stream_index)];
    stream.queue.push_back({channel_index, key, pass});
    if (stream.idle) {
      stream.idle = false;
      stream.actor->resume();
    }
  }

  // A send stream: one message at a time, each started when the previous one has arrived.
  // A daemon: it ends with the last device.
  void stream_main(std::size_t index) {
    sg4::Actor::self()->daemonize();
    SendStream& stream = streams_[index];
    for (;;) {
      while (stream.queue.empty()) {
        stream.idle = true;
        sg4::this_actor::suspend();
      }
      const SendStream::Pending next = stream.queue.front();
      stream.queue.pop_front();
      const auto channel = static_cast<std::size_t>(next.channel);
      sent_at_[channel][next.key] = sg4::Engine::get_clock();
      channel_boxes_[channel]->put_init(pack(next.key, next.pass), platform_.activation_bytes)->start()->wait();
    }
  }

  // Blocks until message `microbatch` of the step starting at key `base` of `channel` has arrived.
  // Messages of one channel arrive in the order they were sent (same route, same size), so earlier
  // ones are taken and remembered.
  void wait_for(DeviceRun& run, int channel_index, std::size_t base, int microbatch) {
    const auto channel = static_cast<std::size_t>(channel_index);
    auto& arrived = arrival_[channel];
    run.waiting_channel = channel_index;
    run.waiting_microbatch = microbatch;
    while (arrived[base + static_cast<std::size_t>(microbatch)] < 0) {
      void* payload = nullptr;
      sg4::CommPtr comm = channel_boxes_[channel]->get_init()->set_dst_data(&payload, sizeof(void*));
      comm->start();
      // Known only when the message had already arrived; otherwise it arrives as the wait ends.
      double finish = comm->get_finish_time();
      comm->wait();
      if (finish < 0) finish = sg4::Engine::get_clock();
      const long long got = key_of(payload);
      if (got < 0 || static_cast<std::size_t>(got) >= arrived.size() || arrived[static_cast<std::size_t>(got)] >= 0) {
        throw Error(fmt::format("SimGrid engine: channel {} delivered an unexpected message (step * m + microbatch {})",
                                channel_index, got));
      }
      const auto key = static_cast<std::size_t>(got);
      arrived[key] = finish;
      const auto m = static_cast<std::size_t>(problem_.microbatches);
      record_transfer(plan_.channels[channel], static_cast<int>(key % m), static_cast<int>(key / m), pass_of(payload),
                      sent_at_[channel][key], finish);
    }
    run.waiting_channel = -1;
  }

  void record_transfer(const Channel& channel, int microbatch, int step, Pass pass, double sent, double arrived) {
    const double start = sent * to_units_;
    const double end = arrived * to_units_;
    // Like the evaluator, record only transfers that take time; on the ideal network a t_comm of 0
    // still leaves the 1e-18 of the message's one byte.
    if (!(end > start) || (!options_.cluster && channel.t_comm <= 0)) return;
    const int from_stage = channel.backward ? channel.boundary + 1 : channel.boundary;
    const int chunk = problem_.chunk_of_stage(from_stage);
    devices_[static_cast<std::size_t>(channel.producer)].transfers.push_back(
        {channel.producer, Stream::send, pass, false, from_stage, microbatch, chunk, step, start, end});
    devices_[static_cast<std::size_t>(channel.consumer)].transfers.push_back(
        {channel.consumer, Stream::recv, pass, false, from_stage, microbatch, chunk, step, start, end});
  }

  // Device d's part of every step's norm all-reduce (optimizer_step.h), in the background of its
  // compute: once d's gradients are ready, each of its stages from the last adds its partial to
  // what the next stage sent and passes it on; stage 0's device sends the verdict to every device.
  void validator_main(int d) {
    DeviceRun& run = devices_[static_cast<std::size_t>(d)];
    std::vector<int> stages;
    for (int s = problem_.stages() - 1; s >= 0; --s) {
      if (problem_.device_of_stage(s) == d) stages.push_back(s);
    }
    const int root = problem_.device_of_stage(0);
    try {
      validate_steps(d, run, stages, root);
    } catch (const std::exception& error) {  // ours only, as in device_main
      if (run.error.empty()) run.error = error.what();
    }
  }

  void validate_steps(int d, DeviceRun& run, const std::vector<int>& stages, int root) {
    for (int step = 0; step < options_.steps; ++step) {
      run.gradients_done->acquire();
      const auto key = static_cast<std::size_t>(step);
      for (const int s : stages) {
        if (s + 1 < problem_.stages() && problem_.device_of_stage(s + 1) != d) receive_control(*partial_boxes_[static_cast<std::size_t>(s)], step);
        if (s > 0 && problem_.device_of_stage(s - 1) != d) send_control(*partial_boxes_[static_cast<std::size_t>(s - 1)], key);
      }
      if (d == root) {
        for (int e = 0; e < problem_.devices; ++e) {
          if (e != d) send_control(*verdict_boxes_[static_cast<std::size_t>(e)], key);
        }
      } else {
        receive_control(*verdict_boxes_[static_cast<std::size_t>(d)], step);
      }
      run.verdict.push_back(sg4::Engine::get_clock() * to_units_);
      run.verdict_known->release();
    }
  }

  void send_control(sg4::Mailbox& box, std::size_t step) {
    box.put_init(pack(step, Pass::F), platform_.grad_norm_bytes)->detach();
    ++activities_;
  }

  void receive_control(sg4::Mailbox& box, int step) {
    void* payload = box.get<void>();
    if (key_of(payload) != step) {
      throw Error(fmt::format("SimGrid engine: {} delivered the all-reduce message of step {} in step {}", box.get_name(),
                              key_of(payload), step));
    }
  }

  SimgridResult collect() {
    const auto p = static_cast<std::size_t>(problem_.devices);
    for (std::size_t d = 0; d < p; ++d) {
      if (!devices_[d].error.empty()) {
        throw Error(fmt::format("SimGrid engine: d{} failed: {}", d, devices_[d].error));
      }
    }
    std::vector<std::size_t> position(p);
    std::string stuck;
    for (std::size_t d = 0; d < p; ++d) {
      const DeviceRun& run = devices_[d];
      position[d] = run.position;
      if (run.finished) continue;
      const PlannedAction& item = plan_.devices[d][run.position];
      const std::string training_step = options_.steps > 1 ? fmt::format(" of training step {}", run.step) : "";
      stuck += fmt::format("\n  d{} at step {}{} ({}, stage {}): ", d, run.position, training_step, to_token(item.action),
                           item.stage);
      if (item.input == InputKind::never) {
        stuck += "its input is produced later on the same device, or never";
      } else if (run.waiting_channel >= 0) {
        const Channel& channel = plan_.channels[static_cast<std::size_t>(run.waiting_channel)];
        stuck += fmt::format("waits for the {} of microbatch {} from stage {} on d{}, which never arrived",
                             channel.backward ? "gradient" : "activation", run.waiting_microbatch,
                             channel.backward ? channel.boundary + 1 : channel.boundary, channel.producer);
      } else {
        stuck += "blocked";
      }
    }
    if (!stuck.empty()) {
      throw ScheduleError(fmt::format("SimGrid engine: schedule '{}' deadlocks; stuck devices:{}\n{}", schedule_.name,
                                      stuck, deadlock_report(problem_, schedule_, position)));
    }

    SimgridResult result;
    Trace& trace = result.trace;
    trace.meta.schedule = schedule_.name;
    trace.meta.engine = "simgrid";
    trace.meta.time_unit = problem_.time_unit;
    trace.devices = problem_.devices;
    std::size_t total = 0;
    for (const DeviceRun& run : devices_) total += run.compute.size() + run.transfers.size();
    trace.spans.reserve(total);
    for (const DeviceRun& run : devices_) trace.spans.insert(trace.spans.end(), run.compute.begin(), run.compute.end());
    for (const DeviceRun& run : devices_) {
      auto transfers = run.transfers;
      // Recorded in arrival order; sorted by time for a deterministic, readable trace.
      std::stable_sort(transfers.begin(), transfers.end(), [](const Span& a, const Span& b) {
        return a.start != b.start ? a.start < b.start : a.end < b.end;
      });
      trace.spans.insert(trace.spans.end(), transfers.begin(), transfers.end());
    }
    trace.memory = memory_timelines();

    StepTimes& step = result.step;
    for (const DeviceRun& run : devices_) {
      step.gradients_ready.push_back(run.gradients_ready.at(0));
      step.verdict.push_back(run.verdict.at(0));
      step.ready.push_back(run.ready.at(0));
    }
    for (std::size_t k = 0; k < static_cast<std::size_t>(options_.steps); ++k) {
      double end = 0;
      for (const DeviceRun& run : devices_) end = std::max(end, run.ready.at(k));
      trace.step_ends.push_back(end);
    }
    result.sim_activities = static_cast<double>(activities_);
    return result;
  }

  // The evaluator's convention: a point {0, 0}, then one point per change; F allocates at its
  // start, B and W (and BW) free at their end.
  std::vector<std::vector<MemoryPoint>> memory_timelines() const {
    std::vector<std::vector<MemoryPoint>> memory;
    for (const DeviceRun& run : devices_) {
      auto& timeline = memory.emplace_back(1, MemoryPoint{0.0, 0.0});
      double value = 0;
      for (const Span& span : run.compute) {
        const MemoryDelta delta = memory_delta(problem_, span.pass, span.stage);
        if (delta.at_start != 0) timeline.push_back({span.start, value += delta.at_start});
        if (delta.at_end != 0) timeline.push_back({span.end, value += delta.at_end});
      }
    }
    return memory;
  }

  const Problem& problem_;
  const Schedule& schedule_;
  const EnginePlan& plan_;
  const SimgridOptions& options_;
  Platform platform_;
  double to_units_ = 1;
  std::vector<DeviceRun> devices_;
  std::vector<sg4::Mailbox*> channel_boxes_;
  std::vector<SendStream> streams_;       // cluster with fifo_sends: per (device, peer)
  std::vector<int> stream_of_channel_;    // index into streams_, -1: send at once
  std::vector<sg4::Mailbox*> partial_boxes_;  // partial_boxes_[s]: the norm partial for stage s, from stage s+1
  std::vector<sg4::Mailbox*> verdict_boxes_;  // verdict_boxes_[d]: the all-reduced norm from stage 0's device
  std::vector<std::vector<double>> arrival_;  // [channel][step * m + microbatch]: simulated arrival, or kNotYet
  std::vector<std::vector<double>> sent_at_;  // [channel][step * m + microbatch]: simulated send time
  // Per stage: the start of its latest W or BW in problem units (data parallelism, optimizer_step.h).
  std::vector<double> last_weight_grad_start_ = std::vector<double>(static_cast<std::size_t>(problem_.stages()), 0.0);
  std::size_t activities_ = 0;
};

}  // namespace

SimgridResult simulate_here(const Problem& problem, const Schedule& schedule, const EnginePlan& plan,
                            const SimgridOptions& options) {
  return Simulation(problem, schedule, plan, options).run();
}

}  // namespace zb::engine
