// zbsim frontier: bubble rate against the memory limit (1p to 3p in p/8 steps) for zb-auto/zb-ilp.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "sim/schedule/atomic_file.h"
#include "sim/cli/commands.h"
#include "sim/schedule/error.h"
#include "sim/solver/frontier.h"
#include "sim/solver/frontier_svg.h"
#include "sim/cli/problem_options.h"
#include "sim/cli/results.h"

namespace zb::cli {

namespace po = boost::program_options;

namespace {

std::string frontier_text(const ProblemSpec& spec, const std::vector<FrontierPoint>& points, Format format) {
  const bool ilp = !points.empty() && points.front().ilp.has_value();
  if (format == Format::json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const FrontierPoint& point : points) {
      nlohmann::json item = {{"limit_times_p", point.limit_times_p}, {"limit", point.limit}};
      item["zb-auto"] = point.auto_feasible
                            ? nlohmann::json{{"status", "ok"},
                                             {"span", point.auto_span},
                                             {"bubble_rate", point.auto_bubble_rate},
                                             {"peak_memory", point.auto_peak_memory}}
                            : nlohmann::json{{"status", "infeasible"}};
      if (point.ilp) {
        const IlpResult& r = *point.ilp;
        item["zb-ilp"] = r.status == IlpStatus::infeasible
                             ? nlohmann::json{{"status", "infeasible"}, {"reason", r.message}}
                             : nlohmann::json{{"status", ilp_status_name(r.status)},
                                              {"span", r.span},
                                              {"bubble_rate", point.ilp_bubble_rate},
                                              {"best_bound", r.best_bound},
                                              {"gap", r.gap},
                                              {"solve_seconds", r.solve_seconds}};
      }
      rows.push_back(std::move(item));
    }
    return nlohmann::json{{"problem", to_json(spec)}, {"frontier", std::move(rows)}}.dump(2) + "\n";
  }
  std::string out;
  if (format == Format::csv) {
    out = "limit_times_p,limit,auto_status,auto_span,auto_bubble_rate,auto_peak_memory";
    if (ilp) out += ",ilp_status,ilp_span,ilp_bubble_rate,ilp_best_bound,ilp_gap,ilp_solve_seconds";
    out += "\n";
    for (const FrontierPoint& point : points) {
      out += fmt::format("{},{},", point.limit_times_p, point.limit);
      out += point.auto_feasible ? fmt::format("ok,{},{},{}", point.auto_span, point.auto_bubble_rate, point.auto_peak_memory)
                                 : std::string("infeasible,,,");
      if (point.ilp) {
        const IlpResult& r = *point.ilp;
        out += r.status == IlpStatus::infeasible
                   ? std::string(",infeasible,,,,,")
                   : fmt::format(",{},{},{},{},{},{}", ilp_status_name(r.status), r.span, point.ilp_bubble_rate,
                                 r.best_bound, r.gap, r.solve_seconds);
      }
      out += "\n";
    }
    return out;
  }
  out = fmt::format("memory frontier: p={} m={}  (limit in multiples of p * M_B; M_B = mem_f per device)\n\n",
                    spec.devices, spec.microbatches);
  out += fmt::format("{:>7} {:>9} {:>12} {:>8} {:>9}", "limit", "absolute", "zb-auto span", "bubble", "peak mem");
  if (ilp) out += fmt::format("  {:>10} {:>12} {:>8} {:>10} {:>7} {:>7}", "zb-ilp", "span", "bubble", "bound", "gap", "time");
  out += "\n";
  for (const FrontierPoint& point : points) {
    out += fmt::format("{:>6.3f}p {:>9.4g}", point.limit_times_p, point.limit);
    out += point.auto_feasible ? fmt::format(" {:>12.4f} {:>7.2f}% {:>9.4g}", point.auto_span, 100 * point.auto_bubble_rate,
                                             point.auto_peak_memory)
                               : fmt::format(" {:>12} {:>8} {:>9}", "infeasible", "", "");
    if (point.ilp) {
      const IlpResult& r = *point.ilp;
      if (r.status == IlpStatus::infeasible) {
        out += fmt::format("  {:>10}", "infeasible");
      } else {
        out += fmt::format("  {:>10} {:>12.4f} {:>7.2f}% {:>10.4f} {:>6.2f}% {:>6.1f}s", ilp_status_name(r.status), r.span,
                           100 * point.ilp_bubble_rate, r.best_bound, 100 * r.gap, r.solve_seconds);
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace

int run_frontier(int argc, char** argv) {
  po::options_description options = problem_options();
  po::options_description own("Frontier");
  own.add_options()
      ("from", po::value<double>()->default_value(1.0), "first limit, in multiples of p * M_B")
      ("to", po::value<double>()->default_value(3.0), "last limit (inclusive)")
      ("step", po::value<double>()->default_value(0.125), "step (default p/8 of M_B, i.e. 0.125p)")
      ("ilp", po::bool_switch(), "also solve zb-ilp at every limit")
      ("time-limit", po::value<double>()->default_value(10), "zb-ilp wall-clock seconds per limit")
      ("format", po::value<std::string>()->default_value("table"), "table | json | csv")
      ("svg", po::value<std::string>(), "write the plot (bubble rate vs limit) as SVG");
  options.add(own);
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim frontier (--scenario FILE | problem flags) [--from 1 --to 3 --step 0.125] [--ilp]\n"
                          "       [--time-limit S] [--format table|json|csv] [--svg F]",
                          "  zbsim frontier --p 8 --m 24 --tf 18.5 --tb 18.1 --tw 9.3 --tcomm 0.6 --svg frontier.svg")) {
    return 0;
  }
  const Scenario scenario = scenario_from_options(values);
  const Format format = parse_format(values["format"].as<std::string>());
  const Problem problem = scenario.spec.build(scenario.source);
  FrontierOptions frontier;
  frontier.from_times_p = values["from"].as<double>();
  frontier.to_times_p = values["to"].as<double>();
  frontier.step_times_p = values["step"].as<double>();
  frontier.with_ilp = values["ilp"].as<bool>();
  frontier.ilp_time_limit_s = values["time-limit"].as<double>();
  if (!(frontier.from_times_p > 0) || !(frontier.step_times_p > 0) || frontier.to_times_p < frontier.from_times_p) {
    throw InputError(fmt::format("--from {:g} --to {:g} --step {:g}: need from > 0, step > 0 and to >= from",
                                 frontier.from_times_p, frontier.to_times_p, frontier.step_times_p));
  }
  if (frontier.with_ilp && !(frontier.ilp_time_limit_s > 0)) {
    throw InputError(fmt::format("--time-limit: {} is not a positive number of seconds", frontier.ilp_time_limit_s));
  }
  const std::vector<FrontierPoint> points = memory_frontier(problem, frontier);
  if (values.count("svg")) {
    const std::string title = fmt::format("Memory frontier: p={} m={}{}", problem.devices, problem.microbatches,
                                          scenario.name.empty() ? "" : " (" + scenario.name + ")");
    write_file_atomically(values["svg"].as<std::string>(), frontier_svg(points, title));
  }
  std::cout << frontier_text(scenario.spec, points, format);
  return 0;
}

}  // namespace zb::cli
