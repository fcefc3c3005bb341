// SimGrid engine speed: simulated activities per CPU-second, against a raw SimGrid loop (target >= 70%).
#include <benchmark/benchmark.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <xbt/log.h>

#include <cstdint>
#include <cstring>
#include <ctime>
#include <string>

#include "sim/simgrid/detail/engine_plan.h"
#include "sim/simgrid/detail/fork_runner.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/simgrid/detail/platform.h"
#include "sim/core/problem_spec.h"
#include "sim/simgrid/simgrid_engine.h"

namespace {

namespace sg4 = simgrid::s4u;

double cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

zb::Problem problem_of(int p, int m) {
  zb::ProblemSpec spec;
  spec.devices = p;
  spec.microbatches = m;
  spec.t_f = {1.0};
  spec.t_b = {1.0};
  spec.t_w = {1.0};
  spec.t_comm = {0.1};
  return spec.build();
}

// Executions plus messages across devices: what both loops hand to SimGrid.
double activities_of(const zb::engine::EnginePlan& plan) {
  double count = 0;
  for (const auto& device : plan.devices) {
    for (const auto& item : device) count += item.output_channel >= 0 ? 2 : 1;
  }
  return count;
}

// The baseline: one actor per device, its list in order (get, execute, detached put), the same
// platform and eager mailboxes, and nothing else: no spans, no memory, no matching, no deadlock
// bookkeeping, no optimizer step. Only correct for schedules that consume each channel in order
// (1F1B, ZB-H1). Returns the child's CPU seconds, Engine creation to the end of run().
double raw_loop_cpu_seconds(const zb::Problem& problem, const zb::engine::EnginePlan& plan) {
  const std::string bytes = zb::engine::simulate_in_child(
      [&] {
        const double start = cpu_seconds();
        xbt_log_control_set("root.thres:critical");
        int argc = 1;
        char name[] = "raw";
        char* argv[] = {name, nullptr};
        auto* engine = new sg4::Engine(&argc, argv);
        const zb::engine::Platform platform = zb::engine::build_platform(problem, plan, std::nullopt, 8);
        std::vector<sg4::Mailbox*> boxes;
        for (std::size_t c = 0; c < plan.channels.size(); ++c) boxes.push_back(sg4::Mailbox::by_name(std::to_string(c)));
        std::vector<sg4::ActorPtr> actors;
        for (std::size_t d = 0; d < plan.devices.size(); ++d) {
          actors.push_back(sg4::Actor::create("raw" + std::to_string(d), platform.hosts[d], [&, d] {
            for (const auto& item : plan.devices[d]) {
              if (item.input == zb::engine::InputKind::channel) {
                boxes[static_cast<std::size_t>(item.input_channel)]->get<void>();
              }
              sg4::this_actor::execute(item.time * platform.flops_per_unit);
              if (item.output_channel >= 0) {
                boxes[static_cast<std::size_t>(item.output_channel)]
                    ->put_init(reinterpret_cast<void*>(std::uintptr_t{1}), platform.activation_bytes)
                    ->detach();
              }
            }
          }));
        }
        for (std::size_t c = 0; c < plan.channels.size(); ++c) {
          boxes[c]->set_receiver(actors[static_cast<std::size_t>(plan.channels[c].consumer)]);
        }
        engine->run();
        const double seconds = cpu_seconds() - start;
        return std::string(reinterpret_cast<const char*>(&seconds), sizeof seconds);
      },
      true);
  double seconds = 0;
  std::memcpy(&seconds, bytes.data(), sizeof seconds);
  return seconds;
}

// Each iteration runs the raw loop and the engine on the same schedule (alternating, so load
// from other processes hits both alike). The iteration time is the engine's CPU time.
void engine_vs_raw(benchmark::State& state, const char* schedule_name) {
  const zb::Problem problem = problem_of(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const zb::Schedule schedule = zb::generate(zb::GeneratorRegistry::with_builtins(), schedule_name, problem);
  const zb::engine::EnginePlan plan = zb::engine::make_engine_plan(problem, schedule);
  const double activities = activities_of(plan);
  double engine_cpu = 0;
  double raw_cpu = 0;
  for (auto _ : state) {
    const double raw = raw_loop_cpu_seconds(problem, plan);
    const zb::SimgridResult result = zb::run_simgrid(problem, schedule, {});
    benchmark::DoNotOptimize(result.trace.metrics.span);
    raw_cpu += raw;
    engine_cpu += result.engine_cpu_seconds;
    state.SetIterationTime(result.engine_cpu_seconds);
  }
  const auto runs = static_cast<double>(state.iterations());
  state.counters["activities"] = activities;
  state.counters["engine_M_per_cpu_s"] = activities * runs / engine_cpu / 1e6;
  state.counters["raw_M_per_cpu_s"] = activities * runs / raw_cpu / 1e6;
  state.counters["engine_vs_raw"] = raw_cpu / engine_cpu;
}

BENCHMARK_CAPTURE(engine_vs_raw, 1f1b, "1f1b")
    ->Args({64, 1024})
    ->UseManualTime()
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(engine_vs_raw, zb_h1, "zb-h1")
    ->Args({64, 1024})
    ->UseManualTime()
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

}  // namespace
