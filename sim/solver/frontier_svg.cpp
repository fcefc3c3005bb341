// Draws the frontier by hand (no plotting dependency): axes, grid, polylines, legend.
#include "sim/solver/frontier_svg.h"

#include "sim/formats/svg_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>

namespace zb {

namespace {

constexpr double kWidth = 780, kHeight = 420;
constexpr double kLeft = 70, kRight = 230, kTop = 50, kBottom = 55;

struct Series {
  std::string label;
  std::string color;
  bool dashed = false;
  std::vector<std::pair<double, double>> points;  // (limit in p, bubble in %)
  bool squares = false;  // a fixed schedule's points (FrontierMarks), not a curve over limits
};

}  // namespace

std::string frontier_svg(const std::vector<FrontierCurve>& curves, const std::string& title,
                         const std::vector<FrontierMarks>& marks) {
  // zb-auto per placement in its own colour; the ILP (one chunk per device only) in red and grey.
  static constexpr const char* kAutoColors[] = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b"};
  std::vector<Series> series;
  for (std::size_t c = 0; c < curves.size(); ++c) {
    const FrontierCurve& curve = curves[c];
    const std::string suffix = curves.size() > 1 ? ", " + curve.label() : "";
    Series heuristic{"zb-auto" + suffix, kAutoColors[c % std::size(kAutoColors)], false, {}};
    Series ilp{"zb-ilp" + suffix, "#d62728", false, {}};
    Series bound{"zb-ilp bound" + suffix, "#7f7f7f", true, {}};
    for (const FrontierPoint& point : curve.points) {
      if (point.auto_feasible) heuristic.points.push_back({point.limit_times_p, 100 * point.auto_bubble_rate});
      if (point.ilp && point.ilp->status != IlpStatus::infeasible) {
        ilp.points.push_back({point.limit_times_p, 100 * point.ilp_bubble_rate});
        const double bound_rate =
            point.ilp->best_bound > 0 ? (point.ilp->best_bound - point.work) / point.ilp->best_bound : 0;
        bound.points.push_back({point.limit_times_p, 100 * bound_rate});
      }
    }
    series.push_back(std::move(heuristic));
    series.push_back(std::move(ilp));
    series.push_back(std::move(bound));
  }
  // Tableau's other colours, so marks never take a curve's.
  static constexpr const char* kMarkColors[] = {"#ff7f0e", "#17becf", "#bcbd22", "#e377c2", "#7f7f7f",
                                                "#393b79", "#637939", "#8c6d31", "#843c39"};
  for (std::size_t k = 0; k < marks.size(); ++k) {
    series.push_back({marks[k].label, kMarkColors[k % std::size(kMarkColors)], false, marks[k].points, true});
  }
  double x_min = 0, x_max = 1, y_max = 1;
  bool first = true;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      x_min = first ? x : std::min(x_min, x);
      x_max = first ? x : std::max(x_max, x);
      y_max = std::max(y_max, y);
      first = false;
    }
  }
  if (x_max <= x_min) x_max = x_min + 1;
  const double y_step = round_axis_step(y_max, 5);
  y_max = std::ceil(y_max / y_step) * y_step;
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (x - x_min) / (x_max - x_min) * plot_w; };
  auto py = [&](double y) { return kTop + plot_h - y / y_max * plot_h; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      kWidth, kHeight);
  svg += fmt::format("<text x=\"{}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", kLeft, xml_escape(title));
  // Grid and axes.
  for (double y = 0; y <= y_max + 1e-9; y += y_step) {
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e0e0e0\"/>\n", kLeft, py(y),
                       kLeft + plot_w, py(y));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}%</text>\n", kLeft - 6, py(y) + 4, y);
  }
  const double x_step = round_axis_step(x_max - x_min, 8);
  for (double x = std::ceil(x_min / x_step) * x_step; x <= x_max + 1e-9; x += x_step) {
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e0e0e0\"/>\n", px(x), kTop,
                       px(x), kTop + plot_h);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:g}p</text>\n", px(x), kTop + plot_h + 18, x);
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", kLeft, kTop,
                     plot_w, plot_h);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{} (multiples of p &#183; M_B)</text>\n",
                     kLeft + plot_w / 2, kHeight - 14,
                     marks.empty() ? "memory limit" : "memory limit (curves), peak memory (squares)");
  svg += fmt::format("<text transform=\"translate(18 {:.1f}) rotate(-90)\" text-anchor=\"middle\">bubble rate</text>\n",
                     kTop + plot_h / 2);
  // Series and legend.
  double legend_y = kTop + 10;
  for (const auto& s : series) {
    if (s.points.empty()) continue;
    std::string coords;
    for (const auto& [x, y] : s.points) coords += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    if (!coords.empty()) coords.pop_back();
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", coords, s.color,
                       s.dashed ? " stroke-dasharray=\"6 4\"" : "");
    if (s.squares) {
      for (const auto& [x, y] : s.points) {
        svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"7\" height=\"7\" fill=\"{}\"/>\n", px(x) - 3.5,
                           py(y) - 3.5, s.color);
      }
    } else if (!s.dashed) {
      for (const auto& [x, y] : s.points) {
        svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", px(x), py(y), s.color);
      }
    }
    const double lx = kLeft + plot_w + 14;
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n",
                       lx, legend_y, lx + 24, legend_y, s.color, s.dashed ? " stroke-dasharray=\"6 4\"" : "");
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", lx + 30, legend_y + 4, xml_escape(s.label));
    legend_y += 20;
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace zb
