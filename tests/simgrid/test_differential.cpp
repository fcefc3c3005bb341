// Differential property test: under the idealised network SimGrid reproduces the evaluator exactly.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "sim/support/atomic_file.h"
#include "tests/simgrid/engine_test_support.h"
#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/formats/pytorch_csv.h"
#include "sim/simgrid/simgrid_engine.h"
#include "sim/core/validator.h"
#include "sim/solver/solver_registry.h"

namespace zb {
namespace {

struct Case {
  Problem problem;
  std::string generator;
};

// The built-in generators and the automatic ones (zb-ilp only on small shapes, with a short time
// limit: any schedule it returns must match).
GeneratorRegistry all_generators() {
  GeneratorRegistry registry = GeneratorRegistry::with_builtins();
  SolverGeneratorOptions options;
  options.ilp_time_limit_s = 2;
  register_solver_generators(registry, options);
  return registry;
}

// Costs drawn from a fixed seed: equal and unequal per device, with and without t_comm, W
// cheaper and dearer than F and B, fractional values that do not add up exactly in binary.
std::vector<Case> cases() {
  std::mt19937 random(20240229);
  std::uniform_real_distribution<double> cost(0.1, 4.0);
  std::uniform_int_distribution<int> coin(0, 3);
  const GeneratorRegistry registry = all_generators();
  std::vector<Case> out;
  for (const std::string& name : registry.names()) {
    // zb-auto (any chunk count) runs here at its multi-chunk placements; zb-1p/zb-2p cover chunks 1.
    const bool multi = registry.get(name).chunks != ChunkSupport::single;
    for (const int p : {1, 2, 3, 4, 6}) {
      if (name == "zb-ilp" && p > 3) continue;
      for (const int m_factor : {1, 2, 3}) {
        const int m = multi ? p * m_factor : (m_factor == 1 ? std::max(1, p - 1) : m_factor == 2 ? 2 * p : 3 * p + 1);
        ProblemSpec spec;
        spec.devices = p;
        spec.microbatches = m;
        spec = testing::generator_spec(registry.get(name), spec, 2 + (m_factor % 2));
        const int kind = coin(random);
        if (kind == 0) {  // the paper's unit-ish costs
          spec.t_f = {1.0};
          spec.t_b = {1.0};
          spec.t_w = {1.0};
          spec.t_comm = {0.0};
        } else {
          const std::size_t values = kind == 1 ? 1 : static_cast<std::size_t>(p);  // scalar or per device
          spec.t_f.clear();
          spec.t_b.clear();
          spec.t_w.clear();
          for (std::size_t i = 0; i < values; ++i) {
            spec.t_f.push_back(cost(random));
            spec.t_b.push_back(cost(random));
            spec.t_w.push_back(cost(random) / 2);
          }
          // Per-boundary t_comm only with one chunk (the ideal network has one latency per device pair).
          spec.t_comm.assign(kind == 3 && !multi ? static_cast<std::size_t>(p) : 1, 0.0);
          for (double& t : spec.t_comm) t = cost(random) / 3;
          // Overlapped pairs (dualpipe-v) partly concurrent, and an all-to-all on every F, B, BW.
          if (kind == 2) {
            spec.overlap = 0.6;
            spec.t_a2a = {spec.t_f[0] / 5};
          }
        }
        spec.t_offload = {spec.t_f[0] / 2};  // so that po-h and po-f can be made (and refused)
        out.push_back({spec.build(), name});
      }
    }
  }
  return out;
}

TEST(SimgridDifferential, IdealNetworkReproducesTheEvaluatorForEveryGenerator) {
  const GeneratorRegistry registry = all_generators();
  int simulated = 0;
  std::set<std::string> generators;
  for (const Case& c : cases()) {
    Schedule schedule;
    try {
      schedule = generate(registry, c.generator, c.problem);
    } catch (const InputError&) {
      continue;  // this generator does not support the shape (or its memory limit is infeasible)
    }
    generators.insert(c.generator);
    if (has_copies(schedule)) {  // po-h, po-f: host links are not modelled in SimGrid yet (issue 30)
      EXPECT_THROW(simulate_simgrid(c.problem, schedule, {}), InputError) << c.generator;
      continue;
    }
    const Trace expected = evaluate(c.problem, schedule);
    const Trace actual = simulate_simgrid(c.problem, schedule, {});
    EXPECT_EQ(actual.meta.engine, "simgrid");
    EXPECT_TRUE(testing::same_trace(expected, actual))
        << c.generator << " p=" << c.problem.devices << " m=" << c.problem.microbatches
        << " chunks=" << c.problem.chunks << " t_f[0]=" << c.problem.t_f[0] << " t_comm[0]=" << c.problem.t_comm[0];
    ++simulated;
  }
  EXPECT_GE(simulated, 60);  // the sweep really ran (every generator, many shapes)
  EXPECT_EQ(generators.size(), registry.names().size());
}

// The two schedules PyTorch's own scheduler wrote: interleaved and V placements, a boundary
// inside one device (V), composite overlap cells.
TEST(SimgridDifferential, IdealNetworkReproducesTheEvaluatorOnPytorchFiles) {
  for (const char* file : {"zb1p_2rank_2stagep_compute.csv", "dualpipev_4rank_10mb.csv"}) {
    const ImportedSchedule imported =
        parse_pytorch_csv(read_file(testing::source_path(std::string("tests/data/pytorch/") + file)), file);
    const Problem problem = testing::imported_spec(imported, 1.3, 1.1, 0.7, 0.45).build();
    ASSERT_TRUE(check_schedule(problem, imported.schedule).ok()) << file;
    const Trace expected = evaluate(problem, imported.schedule);
    const Trace actual = simulate_simgrid(problem, imported.schedule, {});
    EXPECT_TRUE(testing::same_trace(expected, actual)) << file;
    EXPECT_GT(testing::spans_of(actual, false).size(), 0U) << file;
  }
}

// Tiny and zero costs: a zero transfer time records no transfer span (as in the evaluator), and
// the ideal network's one-byte messages stay invisible even at microsecond scales.
TEST(SimgridDifferential, TinyAndZeroCostsStillMatch) {
  for (const double scale : {1e-6, 1e-3, 1e3}) {
    for (const double t_comm : {0.0, 0.25}) {
      ProblemSpec spec;
      spec.devices = 3;
      spec.microbatches = 6;
      spec.t_f = {1.0 * scale, 0.5 * scale, 2.0 * scale};
      spec.t_b = {1.5 * scale};
      spec.t_w = {0.0};
      spec.t_comm = {t_comm * scale};
      const Problem problem = spec.build();
      for (const char* name : {"1f1b", "zb-h1", "zb-h2"}) {
        const Schedule schedule = generate(GeneratorRegistry::with_builtins(), name, problem);
        const Trace expected = evaluate(problem, schedule);
        const Trace actual = simulate_simgrid(problem, schedule);
        EXPECT_TRUE(testing::same_trace(expected, actual)) << name << " scale " << scale << " t_comm " << t_comm;
        EXPECT_EQ(testing::spans_of(actual, false).size(), testing::spans_of(expected, false).size());
      }
    }
  }
}

}  // namespace
}  // namespace zb
