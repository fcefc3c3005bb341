// zbsim solve: the ILP optimum (zb-ilp) under a memory limit, with status, bound, gap and time.
#include <fmt/format.h>

#include <cstdint>
#include <iostream>

#include "sim/app/catalog/solve_row.h"
#include "sim/support/atomic_file.h"
#include "sim/cli/commands.h"
#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/solver/auto_schedule.h"
#include "sim/solver/ilp_solver.h"
#include "sim/cli/common/problem_options.h"
#include "sim/app/catalog/result_table.h"
#include "sim/formats/trace_writers.h"

namespace zb::cli {

namespace po = boost::program_options;

namespace {

std::string summary_line(const IlpResult& result, double bubble_rate, TimeUnit time_unit) {
  const std::string_view unit = time_unit_name(time_unit);
  std::string text = fmt::format(
      "zb-ilp: {}  span {:g} {}  bound {:g}  gap {:.2f}%  bubble {:.2f}%  solved in {:.2f} s  (zb-auto {:g}",
      ilp_status_name(result.status), result.span, unit, result.best_bound, 100 * result.gap, 100 * bubble_rate,
      result.solve_seconds, result.heuristic_span);
  if (result.solver_called) {
    text += fmt::format("; {} order variables, {} rows{}; {} nodes", result.order_variables, result.rows,
                        result.decomposed ? ", decomposed" : "", result.nodes);
  }
  text += ")\n";
  if (result.status != IlpStatus::infeasible) text += fmt::format("  certificate: {}\n", ilp_proof_text(result.proof));
  if (!result.message.empty()) text += "  note: " + result.message + "\n";
  return text;
}

}  // namespace

int run_solve(int argc, char** argv) {
  po::options_description options = problem_options();
  po::options_description own("Solve");
  own.add_options()
      ("node-limit", po::value<std::int64_t>()->default_value(IlpOptions{}.node_limit),
       "CBC branch-and-bound nodes for the whole solve: the budget that makes one input give one result")
      ("search-nodes", po::value<std::int64_t>()->default_value(IlpOptions{}.search_node_limit),
       "nodes of the exact search over in-order schedules that runs before CBC (0: straight to CBC)")
      ("local-evals", po::value<std::int64_t>()->default_value(IlpOptions{}.local_search_evaluations),
       "list timings of the local search over each device's order that improves the start (0: none)")
      ("time-limit", po::value<double>()->default_value(30),
       "wall-clock safety net in seconds (when it fires first, the result says so and may vary between runs)")
      ("format", po::value<std::string>()->default_value("table"), "table | json | csv")
      ("out", po::value<std::string>(), "write the schedule (text form: d0: F0 F1 ...)")
      ("svg", po::value<std::string>(), "write the zb-auto and zb-ilp timelines as SVG")
      ("lp", po::value<std::string>(), "also write the ILP model (CPLEX LP format) to this file")
      ("threads", po::value<int>()->default_value(1), "CBC threads (1 is deterministic)");
  options.add(own);
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim solve (--scenario FILE | --p N --m N --tf X --tb X --tw X ...) [--mem-limit X|Np]\n"
                          "       [--node-limit N] [--search-nodes N] [--local-evals N] [--time-limit S] [--format table|json|csv] [--out schedule.txt]\n"
                          "       [--svg F] [--lp F]",
                          "  zbsim solve --p 4 --m 8 --tf 5 --tb 7 --tw 3 --tcomm 1 --mem-f 2 --mem-b -1 --mem-w -1 \\\n"
                          "              --mem-limit 10 --time-limit 60 --out zb-ilp.txt",
                          {"out", "svg", "lp"})) {
    return 0;
  }
  const Scenario scenario = scenario_from_options(values);
  const Format format = parse_format(values["format"].as<std::string>());
  const Problem problem = scenario.spec.build(scenario.source);
  IlpOptions ilp;
  ilp.node_limit = values["node-limit"].as<std::int64_t>();
  ilp.search_node_limit = values["search-nodes"].as<std::int64_t>();
  if (ilp.search_node_limit < 0) {
    throw InputError(fmt::format("--search-nodes {}: must be 0 or more", ilp.search_node_limit));
  }
  ilp.local_search_evaluations = values["local-evals"].as<std::int64_t>();
  if (ilp.local_search_evaluations < 0) {
    throw InputError(fmt::format("--local-evals {}: must be 0 or more", ilp.local_search_evaluations));
  }
  ilp.time_limit_s = values["time-limit"].as<double>();
  ilp.threads = values["threads"].as<int>();
  if (values.count("lp")) ilp.lp_file = values["lp"].as<std::string>();
  catalog::SolveRun run =
      catalog::solve_row(problem, ilp, values.count("mem-limit") ? "--mem-limit" : scenario.source);
  const IlpResult& result = run.result;
  catalog::ResultRow& row = run.row;
  // The table shows the solver's numbers in its summary line; JSON and CSV carry them as fields.
  if (format == Format::table) row.extras.clear();

  // Both outputs or neither.
  std::vector<FileContent> files;
  if (values.count("out")) {
    const std::string header = fmt::format("# zb-ilp {} (proof: {}) span {:g} bound {:g} memory limit {:g} (p={} m={})\n",
                                           ilp_status_name(result.status), ilp_proof_name(result.proof), result.span, result.best_bound,
                                           result.memory_limit, problem.devices, problem.microbatches);
    files.push_back({values["out"].as<std::string>(), header + to_text(result.schedule)});
  }
  if (values.count("svg")) {
    // zb-auto as the generator runs it at this placement (the greedy with one chunk per device).
    const Schedule heuristic = auto_schedule(problem, result.memory_limit).schedule;
    const Trace auto_trace = evaluate(problem, heuristic);
    files.push_back({values["svg"].as<std::string>(),
                     to_svg({LabeledTrace{"zb-auto", &auto_trace}, LabeledTrace{"zb-ilp", &run.trace}})});
  }
  write_files_atomically(files);
  if (format == Format::table) std::cout << summary_line(result, row.metrics.bubble_rate, problem.time_unit) << "\n";
  std::cout << results_text(scenario.spec, {row}, format);
  return 0;
}

}  // namespace zb::cli
