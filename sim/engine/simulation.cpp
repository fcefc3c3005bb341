// Compute actors (one per device, its action list in order) exchanging eager messages over the platform.
#include "sim/engine/simulation.h"

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <deque>
#include <map>

#include "sim/schedule/deadlock_report.h"
#include "sim/schedule/error.h"
#include "sim/schedule/memory.h"
#include "sim/engine/platform.h"

namespace zb::engine {

namespace sg4 = simgrid::s4u;

namespace {

constexpr double kNotYet = -1.0;  // simulated times are >= 0

double cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// Messages carry (microbatch, pass) packed into the payload pointer: no allocation per message.
// Never null: SimGrid tells a sender from a receiver by a non-null source buffer.
void* pack(int microbatch, Pass pass) {
  return reinterpret_cast<void*>((static_cast<std::uintptr_t>(microbatch + 1) << 2) | static_cast<std::uintptr_t>(pass));
}
int microbatch_of(void* payload) { return static_cast<int>(reinterpret_cast<std::uintptr_t>(payload) >> 2) - 1; }
Pass pass_of(void* payload) { return static_cast<Pass>(reinterpret_cast<std::uintptr_t>(payload) & 3U); }

// One in-order send stream from a device to one peer (cluster mode with fifo_sends).
struct SendStream {
  struct Pending {
    int channel;
    int microbatch;
    Pass pass;
  };
  std::deque<Pending> queue;
  sg4::ActorPtr actor;
  bool idle = false;  // suspended, waiting for the next message
};

struct DeviceRun {
  std::size_t position = 0;  // next step; == list size once finished
  bool finished = false;
  std::string error;          // an exception caught inside the actor
  int waiting_channel = -1;   // what a blocked device waits for (deadlock report)
  int waiting_microbatch = 0;
  std::vector<Span> compute;
  std::vector<Span> transfers;  // send spans (as producer) and recv spans (as consumer)
  double gradients_ready = 0;
  double check_received = 0;
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
    const auto m = static_cast<std::size_t>(problem_.microbatches);
    devices_.resize(p);
    for (std::size_t c = 0; c < plan_.channels.size(); ++c) {
      channel_boxes_.push_back(sg4::Mailbox::by_name(fmt::format("channel{}", c)));
    }
    arrival_.assign(plan_.channels.size(), std::vector<double>(m, kNotYet));
    sent_at_.assign(plan_.channels.size(), std::vector<double>(m, kNotYet));
    for (std::size_t d = 0; d < p; ++d) {
      reduce_boxes_.push_back(sg4::Mailbox::by_name(fmt::format("reduce{}", d)));
      result_boxes_.push_back(sg4::Mailbox::by_name(fmt::format("result{}", d)));
    }
    std::vector<sg4::ActorPtr> actors;
    for (std::size_t d = 0; d < p; ++d) {
      actors.push_back(sg4::Actor::create(fmt::format("device{}", d), platform_.hosts[d],
                                          [this, d] { device_main(static_cast<int>(d)); }));
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
    for (std::size_t d = 0; d < p; ++d) {
      reduce_boxes_[d]->set_receiver(actors[d]);
      result_boxes_[d]->set_receiver(actors[d]);
    }
    engine->run();
    SimgridResult result = collect();
    result.engine_cpu_seconds = cpu_seconds() - cpu_start;
    return result;
  }

 private:
  void device_main(int d) {
    DeviceRun& run = devices_[static_cast<std::size_t>(d)];
    try {
      run_actions(d, run);
      if (run.finished) optimizer_step(d, run);
    } catch (const std::exception& error) {
      // Only our own errors: SimGrid's kill of a deadlocked actor is not a std::exception and
      // must keep unwinding.
      run.error = error.what();
    }
  }

  void run_actions(int d, DeviceRun& run) {
    const auto& actions = plan_.devices[static_cast<std::size_t>(d)];
    const double flops_per_unit = platform_.flops_per_unit;
    run.compute.reserve(actions.size());
    for (std::size_t step = 0; step < actions.size(); ++step) {
      run.position = step;
      // An overlapped pair is one block: both inputs first, one execution, both outputs after.
      const std::size_t parts = actions[step].action.overlap_next && step + 1 < actions.size() ? 2 : 1;
      double time = 0;
      for (std::size_t k = step; k < step + parts; ++k) {
        const PlannedAction& item = actions[k];
        if (item.input == InputKind::never) return;  // stuck for good: reported after the run
        if (item.input == InputKind::channel) wait_for(run, item.input_channel, item.action.microbatch);
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
        run.compute.push_back({d, Stream::compute, item.action.pass, item.stage, item.action.microbatch,
                               item.action.chunk, part_start, part_end, parts == 2 && k == step});
        part_start = part_end;
      }
      for (std::size_t k = step; k < step + parts; ++k) {
        const PlannedAction& item = actions[k];
        if (item.output_channel >= 0) send(item.output_channel, item.action.microbatch, item.action.pass);
      }
      step += parts - 1;
    }
    run.position = actions.size();
    run.finished = true;
    run.gradients_ready = sg4::Engine::get_clock() * to_units_;
  }

  // Sends an output: at once (a detached eager message that overlaps the following compute), or
  // through the in-order stream to that peer.
  void send(int channel_index, int microbatch, Pass pass) {
    const auto channel = static_cast<std::size_t>(channel_index);
    ++activities_;
    const int stream_index = stream_of_channel_[channel];
    if (stream_index < 0) {
      sent_at_[channel][static_cast<std::size_t>(microbatch)] = sg4::Engine::get_clock();
      channel_boxes_[channel]->put_init(pack(microbatch, pass), platform_.activation_bytes)->detach();
      return;
    }
    SendStream& stream = streams_[static_cast<std::size_t>(stream_index)];
    stream.queue.push_back({channel_index, microbatch, pass});
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
      sent_at_[channel][static_cast<std::size_t>(next.microbatch)] = sg4::Engine::get_clock();
      channel_boxes_[channel]->put_init(pack(next.microbatch, next.pass), platform_.activation_bytes)->start()->wait();
    }
  }

  // Blocks until message `microbatch` of `channel` has arrived. Messages of one channel arrive in
  // the order they were sent (same route, same size), so earlier ones are taken and remembered.
  void wait_for(DeviceRun& run, int channel_index, int microbatch) {
    const auto channel = static_cast<std::size_t>(channel_index);
    auto& arrived = arrival_[channel];
    run.waiting_channel = channel_index;
    run.waiting_microbatch = microbatch;
    while (arrived[static_cast<std::size_t>(microbatch)] < 0) {
      void* payload = nullptr;
      sg4::CommPtr comm = channel_boxes_[channel]->get_init()->set_dst_data(&payload, sizeof(void*));
      comm->start();
      // Known only when the message had already arrived; otherwise it arrives as the wait ends.
      double finish = comm->get_finish_time();
      comm->wait();
      if (finish < 0) finish = sg4::Engine::get_clock();
      const int got = microbatch_of(payload);
      if (got < 0 || got >= problem_.microbatches || arrived[static_cast<std::size_t>(got)] >= 0) {
        throw Error(fmt::format("SimGrid engine: channel {} delivered an unexpected message for microbatch {}",
                                channel_index, got));
      }
      arrived[static_cast<std::size_t>(got)] = finish;
      record_transfer(plan_.channels[channel], got, pass_of(payload), sent_at_[channel][static_cast<std::size_t>(got)],
                      finish);
    }
    run.waiting_channel = -1;
  }

  void record_transfer(const Channel& channel, int microbatch, Pass pass, double sent, double arrived) {
    const double start = sent * to_units_;
    const double end = arrived * to_units_;
    // Like the evaluator, record only transfers that take time; on the ideal network a t_comm of 0
    // still leaves the 1e-18 of the message's one byte.
    if (!(end > start) || (!options_.cluster && channel.t_comm <= 0)) return;
    const int from_stage = channel.backward ? channel.boundary + 1 : channel.boundary;
    const int chunk = problem_.chunk_of_stage(from_stage);
    devices_[static_cast<std::size_t>(channel.producer)].transfers.push_back(
        {channel.producer, Stream::send, pass, from_stage, microbatch, chunk, start, end});
    devices_[static_cast<std::size_t>(channel.consumer)].transfers.push_back(
        {channel.consumer, Stream::recv, pass, from_stage, microbatch, chunk, start, end});
  }

  // The grad-norm reduction along the pipeline, then its result back: what the barrier waits
  // for, and what post-validation checks in the background.
  void optimizer_step(int d, DeviceRun& run) {
    const auto index = static_cast<std::size_t>(d);
    const int last = problem_.devices - 1;
    if (d > 0) reduce_boxes_[index]->get<void>();
    if (d < last) {
      reduce_boxes_[index + 1]->put_init(pack(d, Pass::F), platform_.grad_norm_bytes)->detach();
      ++activities_;
      result_boxes_[index]->get<void>();
    }
    if (d > 0) {
      result_boxes_[index - 1]->put_init(pack(d, Pass::F), platform_.grad_norm_bytes)->detach();
      ++activities_;
    }
    run.check_received = sg4::Engine::get_clock() * to_units_;
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
      stuck += fmt::format("\n  d{} at step {} ({}, stage {}): ", d, run.position, to_token(item.action), item.stage);
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
      step.gradients_ready.push_back(run.gradients_ready);
      step.check_received.push_back(run.check_received);
      step.post_validation = std::max(step.post_validation, run.gradients_ready + options_.optimizer_step_time);
      step.barrier = std::max(step.barrier, run.check_received + options_.optimizer_step_time);
      step.validation_end = std::max(step.validation_end, run.check_received);
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
  std::vector<sg4::Mailbox*> reduce_boxes_;  // reduce_boxes_[d]: the partial from d-1
  std::vector<sg4::Mailbox*> result_boxes_;  // result_boxes_[d]: the reduced grad norm from d+1
  std::vector<std::vector<double>> arrival_;  // [channel][microbatch]: simulated arrival, or kNotYet
  std::vector<std::vector<double>> sent_at_;  // [channel][microbatch]: simulated send time
  std::size_t activities_ = 0;
};

}  // namespace

SimgridResult simulate_here(const Problem& problem, const Schedule& schedule, const EnginePlan& plan,
                            const SimgridOptions& options) {
  return Simulation(problem, schedule, plan, options).run();
}

}  // namespace zb::engine
