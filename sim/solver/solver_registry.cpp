// The generator entries of the solver: thin wrappers that pick the memory limit and name.
#include "sim/solver/solver_registry.h"

#include <fmt/format.h>

#include "sim/solver/auto_schedule.h"
#include "sim/solver/detail/greedy_schedule.h"
#include "sim/solver/detail/official_runtime.h"
#include "sim/solver/ilp_solver.h"
#include "sim/solver/detail/v_controllable.h"
#include "sim/solver/detail/zb_v_greedy.h"

namespace zb {

namespace {

// zb-Np: the limit N * p * M_B, whatever the problem's own limit says.
GeneratorFn greedy_at_multiple(int times_p, const char* name) {
  return [times_p, name](const Problem& problem) {
    const double limit = times_p * problem.devices * problem.activation_unit();
    Schedule schedule = greedy_schedule(problem, limit).schedule;
    schedule.name = name;
    return schedule;
  };
}

}  // namespace

void register_solver_generators(GeneratorRegistry& registry, const SolverGeneratorOptions& options) {
  registry.add(GeneratorInfo{
      "zb-v", "greedy ZB-V: 2 chunks per device in a V under --mem-limit (default 1F1B's p*M_B), zero bubble at equal costs",
      ChunkSupport::multi, true, [](const Problem& problem) { return zb_v_greedy(problem).schedule; }, false,
      Placement::vshape});
  registry.add(GeneratorInfo{"v-min", "V-Min: building-block V at 1/3 of ZB-V's activation memory ((p+4)/3 M_B)",
                             ChunkSupport::multi, false, make_v_min, false, Placement::vshape});
  registry.add(GeneratorInfo{"v-half", "V-Half: building-block V at 1/2 of ZB-V's activation memory ((p+2)/2 M_B)",
                             ChunkSupport::multi, false, make_v_half, false, Placement::vshape});
  registry.add(GeneratorInfo{"v-auto",
                             "building-block V with the smallest bubble under --mem-limit (default p*M_B: ZB-V's memory)",
                             ChunkSupport::multi, true, make_v_auto, false, Placement::vshape});
  registry.add(GeneratorInfo{
      "zb-auto",
      "the best schedule under --mem-limit: the memory-aware greedy (8 variants) at chunks 1; with --chunks 2 "
      "--placement vshape the V schedules (zb-v, zb-v-h, v-auto), interleaved: zb-i and 1f1b-i",
      ChunkSupport::any, true, [](const Problem& problem) { return auto_schedule(problem).schedule; }});
  registry.add(GeneratorInfo{"zb-1p", "zb-auto at memory limit 1p (ZB-H1 memory)", ChunkSupport::single,
                             true, greedy_at_multiple(1, "zb-1p")});
  registry.add(GeneratorInfo{"zb-2p", "zb-auto at memory limit 2p (ZB-H2 memory)", ChunkSupport::single,
                             true, greedy_at_multiple(2, "zb-2p")});
  for (int times_p : {1, 2}) {
    registry.add(GeneratorInfo{
        fmt::format("zb-{}p-official", times_p),
        fmt::format("ZB-{}p as the official runtime builds it: its 8 heuristic variants at {}p on the stages' "
                    "median F/B/W and largest comm, timed on the true costs",
                    times_p, times_p),
        ChunkSupport::single, true, [times_p](const Problem& problem) { return official_runtime_schedule(problem, times_p); }});
  }
  if (ilp_available()) {
    registry.add(GeneratorInfo{
        "zb-ilp",
        fmt::format("ILP optimum on COIN-OR CBC under --mem-limit, warm-started from zb-auto ({} nodes; {:g} s "
                    "safety net)",
                    IlpOptions{}.node_limit, options.ilp_time_limit_s),
        ChunkSupport::single, true, [limit_s = options.ilp_time_limit_s](const Problem& problem) {
          IlpOptions ilp_options;
          ilp_options.time_limit_s = limit_s;
          IlpResult result = solve_ilp(problem, ilp_options);
          return require_schedule(result);
        },
        true});
  }
}

}  // namespace zb
