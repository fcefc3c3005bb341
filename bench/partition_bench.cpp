// Layer partitioning for an 80-layer model (Llama-2 70B on A100s, tensor parallel 8 with sequence parallelism, flash
// attention) at p = 8, 16 and 32, one and two chunks per device: the dynamic program's candidates
// alone, and the whole choice (the candidates, even and paper, each through the evaluator's
// steady state at m = 2p; zb-h1 with one chunk, zb-v-h with two), printed as one table. Each time
// is the fastest of 5 runs: ./bench/zb_bench_partition
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>

#include "models/layer_partition.h"
#include "sim/app/catalog/balanced_split.h"
#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/detail/in_flight.h"
#include "sim/app/catalog/model_costs.h"

namespace {

double fastest_ms(const std::function<void()>& run) {
  double best = 1e300;
  for (int k = 0; k < 5; ++k) {
    const auto start = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main() {
  fmt::print("{:>3} {:>6} {:>7} {:>10} {:>16} {:>14}  {}\n", "p", "chunks", "stages", "schedule", "DP candidates ms",
             "whole choice ms", "chosen");
  for (const int chunks : {1, 2}) {
    for (const int p : {8, 16, 32}) {
      const std::string schedule = chunks == 1 ? "zb-h1" : "zb-v-h";
      nlohmann::json object{{"model", "llama2-70b"}, {"hardware", "a100-80gb"}, {"tensor_parallel", 8}, {"sequence_parallel", true},
                            {"flash_attention", true}, 
                            {"problem", {{"p", p}, {"m", 2 * p}, {"chunks", chunks}}}};
      zb::Scenario scenario = zb::scenario_from_json(object, "bench", ".");
      zb::derive_model_costs(scenario);
      const zb::catalog::NamedSchedule named = zb::catalog::generate_named(schedule, scenario);
      const zb::models::ModelSetup& setup = *scenario.model;
      const auto pieces = zb::models::model_pieces(setup);
      const auto request = zb::models::partition_request(setup, zb::catalog::pipeline_shape(named.problem),
                                                         zb::catalog::in_flight_per_stage(named.problem, named.schedule));
      std::size_t candidates = 0;
      const double dp_ms = fastest_ms([&] { candidates = zb::models::partition_candidates(pieces, request).size(); });
      std::string chosen;
      const double whole_ms = fastest_ms([&] {
        const auto choice = zb::catalog::choose_split(scenario, schedule, {});
        chosen = choice.chosen < 0 ? "none fits" : choice.trials[choice.chosen].label;
      });
      fmt::print("{:>3} {:>6} {:>7} {:>10} {:>16.3f} {:>14.1f}  {} ({} candidates)\n", p, chunks, p * chunks, schedule,
                 dp_ms, whole_ms, chosen, candidates);
    }
  }
  return 0;
}
