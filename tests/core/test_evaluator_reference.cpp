// The evaluator against a plain reference: every device retries its next action until nothing
// moves, with the problem's own functions per action. Times do not depend on the order in which
// devices are visited, so compute spans, memory timelines and metrics must agree exactly; the
// transfer spans of a device, whose order follows the evaluator's worklist, agree as a multiset.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/memory.h"
#include "sim/core/optimizer_step.h"
#include "sim/core/pass_time.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

struct Reference {
  std::vector<std::vector<Span>> compute;    // per device, every step's spans in list order
  std::vector<std::vector<Span>> transfers;  // per device
  std::vector<std::vector<MemoryPoint>> memory;
  std::vector<double> step_ends;
};

Reference reference_evaluate(const Problem& problem, const Schedule& schedule, int steps) {
  const int p = problem.devices;
  Reference out;
  out.compute.resize(p);
  out.transfers.resize(p);
  out.memory.assign(p, {MemoryPoint{0, 0}});
  std::vector<double> clock(p, 0.0);
  std::vector<double> memory(p, 0.0);
  std::vector<double> last_weight_grad_start(static_cast<std::size_t>(problem.stages()), 0.0);
  for (int step = 0; step < steps; ++step) {
    std::map<std::pair<int, int>, double> end_f;  // (stage, microbatch)
    std::map<std::pair<int, int>, double> end_b;
    std::vector<std::size_t> next(p, 0);
    // When the input of device d's action i is ready, or -1.
    const auto ready = [&](int d, std::size_t i) {
      const Action& a = schedule.devices[d][i];
      const int s = problem.stage_of(d, a.chunk);
      const StagePath path = problem.path(a.microbatch);
      const auto find = [](const auto& ends, int stage, int mb) {
        const auto it = ends.find({stage, mb});
        return it == ends.end() ? -1.0 : it->second;
      };
      if (a.pass == Pass::F) {
        if (s == path.first) return 0.0;
        const double e = find(end_f, s - 1, a.microbatch);
        return e < 0 ? -1.0 : e + problem.comm_after(s - 1);
      }
      if (a.pass == Pass::W) return find(end_b, s, a.microbatch);
      if (s == path.last) return find(end_f, s, a.microbatch);
      const double e = find(end_b, s + 1, a.microbatch);
      return e < 0 ? -1.0 : e + problem.comm_after(s);
    };
    const auto run = [&](int d, std::size_t i, double start, double end, double output_at) {
      const Action& a = schedule.devices[d][i];
      const int s = problem.stage_of(d, a.chunk);
      const StagePath path = problem.path(a.microbatch);
      out.compute[d].push_back(
          {d, Stream::compute, a.pass, a.overlap_next, s, a.microbatch, a.chunk, step, start, end});
      const MemoryDelta delta = memory_delta(problem, a.pass, s);
      if (delta.at_start != 0) out.memory[d].push_back({start, memory[d] += delta.at_start});
      if (delta.at_end != 0) out.memory[d].push_back({end, memory[d] += delta.at_end});
      if (a.pass == Pass::W || a.pass == Pass::BW) last_weight_grad_start[static_cast<std::size_t>(s)] = start;
      clock[d] = output_at;
      int to_stage = -1;
      if (a.pass == Pass::F) {
        end_f[{s, a.microbatch}] = output_at;
        if (s < path.last) to_stage = s + 1;
      } else if (a.pass != Pass::W) {
        end_b[{s, a.microbatch}] = output_at;
        if (s > path.first) to_stage = s - 1;
      }
      const double delay = to_stage < 0 ? 0.0 : problem.comm_after(std::min(s, to_stage));
      if (delay > 0) {
        const int to = problem.device_of_stage(to_stage);
        out.transfers[d].push_back(
            {d, Stream::send, a.pass, false, s, a.microbatch, a.chunk, step, output_at, output_at + delay});
        out.transfers[to].push_back(
            {to, Stream::recv, a.pass, false, s, a.microbatch, a.chunk, step, output_at, output_at + delay});
      }
    };
    for (bool moved = true; moved;) {
      moved = false;
      for (int d = 0; d < p; ++d) {
        const auto& actions = schedule.devices[d];
        while (next[d] < actions.size()) {
          const std::size_t i = next[d];
          const double r = ready(d, i);
          if (r < 0) break;
          if (actions[i].overlap_next && i + 1 < actions.size()) {
            const double r2 = ready(d, i + 1);
            if (r2 < 0) break;
            const BlockTimes block = overlapped_times(problem, actions[i].pass, problem.stage_of(d, actions[i].chunk),
                                                      actions[i + 1].pass, problem.stage_of(d, actions[i + 1].chunk));
            const double start = std::max({clock[d], r, r2});
            run(d, i, start, start + block.first, start + block.total());
            run(d, i + 1, start + block.first, start + block.total(), start + block.total());
            next[d] += 2;
          } else {
            const double start = std::max(clock[d], r);
            run(d, i, start, start + pass_time(problem, actions[i].pass, problem.stage_of(d, actions[i].chunk)),
                start + pass_time(problem, actions[i].pass, problem.stage_of(d, actions[i].chunk)));
            next[d] += 1;
          }
          moved = true;
        }
      }
    }
    std::vector<double> gradients(p);
    for (int d = 0; d < p; ++d) gradients[d] = gradients_ready(problem, d, clock[d], last_weight_grad_start);
    const StepBoundary boundary = step_boundary(problem, gradients, OptimizerStep{});
    out.step_ends.push_back(*std::max_element(boundary.ready.begin(), boundary.ready.end()));
    clock = boundary.ready;
  }
  return out;
}

auto key(const Span& s) { return std::tuple(s.stream, s.pass, s.stage, s.microbatch, s.step, s.start, s.end); }

void expect_same(const Problem& problem, const Schedule& schedule, int steps, const std::string& what) {
  SCOPED_TRACE(what);
  const Trace trace = evaluate(problem, schedule, {.steps = steps});
  const Reference ref = reference_evaluate(problem, schedule, steps);
  std::size_t at = 0;
  for (int d = 0; d < problem.devices; ++d) {
    // The evaluator lays out every step of device d in list order.
    ASSERT_GE(trace.spans.size(), at + ref.compute[d].size());
    for (const Span& expected : ref.compute[d]) {
      const Span& got = trace.spans[at++];
      ASSERT_EQ(got.device, d);
      EXPECT_EQ(key(got), key(expected));
      EXPECT_EQ(got.chunk, expected.chunk);
      EXPECT_EQ(got.overlap_next, expected.overlap_next);
    }
  }
  std::vector<std::vector<Span>> transfers(problem.devices);
  for (; at < trace.spans.size(); ++at) transfers[trace.spans[at].device].push_back(trace.spans[at]);
  for (int d = 0; d < problem.devices; ++d) {
    std::vector<Span> expected = ref.transfers[d];
    std::vector<Span> got = transfers[d];
    const auto by_key = [](const Span& a, const Span& b) { return key(a) < key(b); };
    std::sort(expected.begin(), expected.end(), by_key);
    std::sort(got.begin(), got.end(), by_key);
    ASSERT_EQ(got.size(), expected.size()) << "d" << d;
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(key(got[i]), key(expected[i]));
    ASSERT_EQ(trace.memory[d].size(), ref.memory[d].size()) << "d" << d;
    for (std::size_t i = 0; i < ref.memory[d].size(); ++i) {
      EXPECT_EQ(trace.memory[d][i].time, ref.memory[d][i].time);
      EXPECT_EQ(trace.memory[d][i].value, ref.memory[d][i].value);
    }
  }
  EXPECT_EQ(trace.step_ends, ref.step_ends);
  // The fast metrics-only run agrees with the recorded one.
  const Trace bare = evaluate(
      problem, schedule, {.record_spans = false, .record_transfers = false, .record_memory = false, .steps = steps});
  EXPECT_EQ(bare.metrics.span, trace.metrics.span);
  EXPECT_EQ(bare.metrics.busy, trace.metrics.busy);
  EXPECT_EQ(bare.metrics.peak_memory, trace.metrics.peak_memory);
  EXPECT_EQ(bare.step_ends, trace.step_ends);
}

// Uneven per-stage costs, per-link transfers, and for the pair schedules an all-to-all under a
// partial overlap.
ProblemSpec uneven_spec(int p, int m, int chunks, Placement placement) {
  ProblemSpec spec;
  spec.devices = p;
  spec.microbatches = m;
  spec.chunks = chunks;
  spec.placement = placement;
  const int stages = p * (placement == Placement::bidirectional ? 2 : chunks);
  for (int s = 0; s < stages; ++s) {
    spec.t_f.push_back(1.0 + 0.125 * (s % 3));
    spec.t_b.push_back(1.25 + 0.0625 * (s % 5));
    spec.t_w.push_back(0.5 + 0.25 * (s % 2));
  }
  spec.t_comm.clear();
  for (int d = 0; d < p; ++d) spec.t_comm.push_back(0.03 + 0.01 * (d % 4));
  spec.t_a2a = {0.2};
  spec.overlap = 0.6;
  spec.t_opt = {0.75};
  spec.t_reduce_hop = 0.05;
  spec.t_dp_reduce = {0.4};
  return spec;
}

TEST(EvaluatorReference, EveryBuiltinGeneratorAgrees) {
  const GeneratorRegistry registry = GeneratorRegistry::with_builtins();
  int compared = 0;
  for (const std::string& name : registry.names()) {
    const GeneratorInfo& info = registry.get(name);
    if (info.long_running || info.uses_memory_limit) continue;
    const int chunks = info.chunks == ChunkSupport::single ? 1 : 2;
    const Placement placement = info.placement.value_or(chunks == 1 ? Placement::linear : Placement::interleaved);
    for (const auto& [p, m] : {std::pair{4, 8}, std::pair{5, 12}}) {
      ProblemSpec spec = uneven_spec(p, m, chunks, placement);
      Schedule schedule;
      Problem problem;
      try {
        problem = spec.build();
        schedule = generate(registry, name, problem);
      } catch (const Error&) {
        continue;  // this generator does not take this shape
      }
      for (int steps : {1, 3}) expect_same(problem, schedule, steps, name + " p=" + std::to_string(p));
      ++compared;
    }
  }
  EXPECT_GE(compared, 14);  // every generator at some shape, most at both
}

TEST(EvaluatorReference, BidirectionalDualPipeAgrees) {
  const GeneratorRegistry registry = GeneratorRegistry::with_builtins();
  const Problem problem = uneven_spec(4, 8, 2, Placement::bidirectional).build();
  expect_same(problem, generate(registry, "dualpipe", problem), 3, "dualpipe");
}

}  // namespace
}  // namespace zb
