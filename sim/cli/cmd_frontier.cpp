// zbsim frontier: bubble rate against the memory limit (1p to 3p in p/8 steps) for zb-auto/zb-ilp,
// one curve per placement.
#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "sim/app/catalog/frontier_curves.h"
#include "sim/app/catalog/frontier_offload.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/cli/commands.h"
#include "sim/solver/frontier.h"
#include "sim/solver/frontier_svg.h"
#include "sim/cli/common/problem_options.h"
#include "sim/app/catalog/result_table.h"

namespace zb::cli {

namespace po = boost::program_options;

namespace {

std::string csv_row(const FrontierCurve& curve, const FrontierPoint& point, bool ilp) {
  std::string out = fmt::format("{},{},{},{},", placement_name(curve.placement), curve.chunks, point.limit_times_p,
                                point.limit);
  out += point.auto_feasible ? fmt::format("ok,{},{},{}", point.auto_span, point.auto_bubble_rate, point.auto_peak_memory)
                             : std::string("infeasible,,,");
  if (ilp) {
    if (!point.ilp) return out + ",,,,,,";
    const IlpResult& r = *point.ilp;
    out += r.status == IlpStatus::infeasible
               ? std::string(",infeasible,,,,,")
               : fmt::format(",{},{},{},{},{},{}", ilp_status_name(r.status), r.span, point.ilp_bubble_rate,
                             r.best_bound, r.gap, r.solve_seconds);
  }
  return out;
}

// Side by side: one column group per placement, the ILP's columns after the one-chunk group.
std::string table(const ProblemSpec& spec, const std::vector<FrontierCurve>& curves) {
  auto has_ilp = [](const FrontierCurve& curve) {
    return !curve.points.empty() && curve.points.front().ilp.has_value();
  };
  std::string out = fmt::format(
      "memory frontier: p={} m={}  (limit in multiples of p * M_B; M_B = mem_f per device; equal total work)\n\n",
      spec.devices, spec.microbatches);
  std::string heading = fmt::format("{:17}", "");
  std::string columns = fmt::format("{:>7} {:>9}", "limit", "absolute");
  for (const FrontierCurve& curve : curves) {
    const int width = has_ilp(curve) ? 32 + 59 : 32;
    heading += fmt::format("  {:<{}}", curve.label(), width);
    columns += fmt::format("  {:>12} {:>8} {:>9}", "zb-auto span", "bubble", "peak mem");
    if (has_ilp(curve)) {
      columns += fmt::format("  {:>10} {:>12} {:>8} {:>10} {:>7} {:>7}", "zb-ilp", "span", "bubble", "bound", "gap", "time");
    }
  }
  if (curves.size() > 1) out += heading.substr(0, heading.find_last_not_of(' ') + 1) + "\n";
  out += columns + "\n";
  for (std::size_t k = 0; k < curves.front().points.size(); ++k) {
    const FrontierPoint& first = curves.front().points[k];
    out += fmt::format("{:>6.3f}p {:>9.4g}", first.limit_times_p, first.limit);
    for (const FrontierCurve& curve : curves) {
      const FrontierPoint& point = curve.points[k];
      out += point.auto_feasible ? fmt::format("  {:>12.4f} {:>7.2f}% {:>9.4g}", point.auto_span,
                                               100 * point.auto_bubble_rate, point.auto_peak_memory)
                                 : fmt::format("  {:>12} {:>8} {:>9}", "infeasible", "", "");
      if (point.ilp) {
        const IlpResult& r = *point.ilp;
        out += r.status == IlpStatus::infeasible
                   ? fmt::format("  {:>10} {:>12} {:>8} {:>10} {:>7} {:>7}", "infeasible", "", "", "", "", "")
                   : fmt::format("  {:>10} {:>12.4f} {:>7.2f}% {:>10.4f} {:>6.2f}% {:>6.1f}s", ilp_status_name(r.status),
                                 r.span, 100 * point.ilp_bubble_rate, r.best_bound, 100 * r.gap, r.solve_seconds);
      }
    }
    out += "\n";
  }
  return out;
}

bool ran(const catalog::OffloadPoint& point) { return point.status == "ok" || point.status == "over-limit"; }

// --offload: one line per schedule and number of chunks offloaded.
std::string offload_table(const std::vector<catalog::OffloadSeries>& series) {
  std::string out = fmt::format("\nwith activation offload (peak memory in multiples of p * M_B):\n{:<10} {:>6} {:>9} {:>10} {:>8} {:>12}\n",
                                "schedule", "chunks", "offloaded", "peak mem", "bubble", "span");
  for (const catalog::OffloadSeries& one : series) {
    for (const catalog::OffloadPoint& point : one.points) {
      const std::string offloaded = point.offload_chunks < 0 ? "own" : fmt::format("{}", point.offload_chunks);
      out += fmt::format("{:<10} {:>6} {:>9}", one.schedule, point.chunks, offloaded);
      out += ran(point) ? fmt::format(" {:>9.4g}p {:>7.2f}% {:>12.4f}\n", point.peak_times_p, 100 * point.bubble_rate,
                                      point.span)
                        : fmt::format("  {}: {}\n", point.status, point.reason);
    }
  }
  return out;
}

std::vector<FrontierMarks> offload_marks(const std::vector<catalog::OffloadSeries>& series) {
  std::vector<FrontierMarks> marks;
  for (const catalog::OffloadSeries& one : series) {
    FrontierMarks mark{one.points.size() > 1 ? fmt::format("{} offload 0..{}", one.schedule, one.points.size() - 1)
                                             : one.schedule,
                       {}};
    for (const catalog::OffloadPoint& point : one.points) {
      if (ran(point)) mark.points.push_back({point.peak_times_p, 100 * point.bubble_rate});
    }
    if (!mark.points.empty()) marks.push_back(std::move(mark));
  }
  return marks;
}

std::string frontier_text(const ProblemSpec& spec, const std::vector<FrontierCurve>& curves, Format format,
                          const std::vector<catalog::OffloadSeries>& offloaded) {
  if (format == Format::json) {
    nlohmann::json json = catalog::frontier_json(spec, curves);
    if (!offloaded.empty()) json["offload"] = catalog::offload_json(offloaded);
    return json.dump(2) + "\n";
  }
  if (format == Format::csv) {
    bool ilp = false;
    for (const FrontierCurve& curve : curves) ilp = ilp || (!curve.points.empty() && curve.points.front().ilp);
    std::string out = "placement,chunks,limit_times_p,limit,auto_status,auto_span,auto_bubble_rate,auto_peak_memory";
    if (ilp) out += ",ilp_status,ilp_span,ilp_bubble_rate,ilp_best_bound,ilp_gap,ilp_solve_seconds";
    out += "\n";
    for (const FrontierCurve& curve : curves) {
      for (const FrontierPoint& point : curve.points) out += csv_row(curve, point, ilp) + "\n";
    }
    return out;
  }
  return table(spec, curves) + (offloaded.empty() ? "" : offload_table(offloaded));
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
      ("time-limit", po::value<double>()->default_value(60),
       "zb-ilp's wall-clock safety net per limit, in seconds (its budget is CBC nodes)")
      ("format", po::value<std::string>()->default_value("table"), "table | json | csv")
      ("placements", po::value<std::string>(),
       "comma-separated placements to compare at equal work, each at its natural chunk count: linear (1), "
       "vshape (2), interleaved (--chunks or 2). Default: linear,vshape (or the --placement given)")
      ("offload", po::bool_switch(),
       "also place fixed schedules with 0..v of their chunks offloaded to host memory (1f1b, zb-h1, 1f1b-i, gis-h, "
       "zb-v, v-half, v-min) and PipeOffload's po-h and po-f by their peak memory (needs --t-offload or a "
       "model-driven scenario; table and json)")
      ("svg", po::value<std::string>(), "write the plot (bubble rate vs limit) as SVG");
  options.add(own);
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim frontier (--scenario FILE | problem flags) [--from 1 --to 3 --step 0.125] [--ilp]\n"
                          "       [--placements linear,vshape] [--time-limit S] [--format table|json|csv] [--svg F]",
                          "  zbsim frontier --p 8 --m 24 --tf 18.5 --tb 18.1 --tw 9.3 --tcomm 0.6 --svg frontier.svg",
                          {"svg"})) {
    return 0;
  }
  const Scenario scenario = scenario_from_options(values);
  const Format format = parse_format(values["format"].as<std::string>());
  FrontierOptions frontier;
  frontier.from_times_p = values["from"].as<double>();
  frontier.to_times_p = values["to"].as<double>();
  frontier.step_times_p = values["step"].as<double>();
  frontier.with_ilp = values["ilp"].as<bool>();
  frontier.ilp_time_limit_s = values["time-limit"].as<double>();
  std::optional<std::vector<std::string>> placements;
  if (values.count("placements")) placements = split_list(values["placements"].as<std::string>());
  const bool offload = values["offload"].as<bool>();
  if (offload && format == Format::csv) throw InputError("--offload: its points have other columns; use --format table or json");
  const std::vector<FrontierCurve> curves =
      catalog::frontier_curves(scenario.spec, scenario.source, placements, frontier);
  const std::vector<catalog::OffloadSeries> offloaded =
      offload ? catalog::offload_series(scenario) : std::vector<catalog::OffloadSeries>{};
  if (values.count("svg")) {
    const std::string title = fmt::format("Memory frontier: p={} m={}{}", scenario.spec.devices,
                                          scenario.spec.microbatches,
                                          scenario.name.empty() ? "" : " (" + scenario.name + ")");
    write_file_atomically(values["svg"].as<std::string>(), frontier_svg(curves, title, offload_marks(offloaded)));
  }
  std::cout << frontier_text(scenario.spec, curves, format, offloaded);
  return 0;
}

}  // namespace zb::cli
