// Drawing line and bar charts as plain SVG: axes with round ticks, a legend, fixed colours.
#include "sim/app/sweep/chart.h"

#include "sim/formats/svg_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace zb::sweep {

namespace {

constexpr double kWidth = 760;   // chart area incl. margins, without the legend
constexpr double kLegend = 260;
constexpr double kHeight = 340;
constexpr double kLeft = 70, kRight = 20, kTop = 56, kBottom = 50;
constexpr const char* kColors[] = {"#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2",
                                   "#B279A2", "#EECA3B", "#FF9DA6", "#9D755D", "#BAB0AC"};
constexpr const char* kDashes[] = {"", "6,3", "2,3", "8,3,2,3"};

std::string number(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.3g}", v);
  if (a >= 100 || std::abs(v - std::round(v)) < 1e-9 * std::max(1.0, a)) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3g}", v);
}

// Round ticks covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi) {
  if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::abs(lo) * 0.1);
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (double t = std::floor(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  if (ticks.empty() || ticks.back() < hi - step * 1e-9) ticks.push_back(ticks.empty() ? hi : ticks.back() + step);
  return ticks;
}

std::string render_one(const Chart& chart, double y0) {
  std::string svg = fmt::format("<g transform=\"translate(0,{:.0f})\">\n", y0);
  svg += fmt::format("<text x=\"{}\" y=\"22\" font-size=\"16\" font-weight=\"bold\">{}</text>\n", kLeft,
                     xml_escape(chart.title));
  if (!chart.subtitle.empty()) {
    svg += fmt::format("<text x=\"{}\" y=\"40\" font-size=\"11\" fill=\"#555\">{}</text>\n", kLeft,
                       xml_escape(chart.subtitle));
  }
  const double plot_w = kWidth - kLeft - kRight;
  const double plot_h = kHeight - kTop - kBottom;
  // Ranges.
  std::set<double> xs;
  double ymax = chart.y_reference.value_or(0);
  double ymin = 0;
  for (const auto& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      xs.insert(x);
      ymax = std::max(ymax, y);
      ymin = std::min(ymin, y);
    }
  }
  if (xs.empty()) return svg + "</g>\n";
  const std::vector<double> yticks = nice_ticks(ymin, ymax * 1.05);
  const double ylo = yticks.front(), yhi = yticks.back();
  auto ypos = [&](double y) { return kTop + plot_h * (1 - (y - ylo) / (yhi - ylo)); };
  const double xlo = *xs.begin(), xhi = *xs.rbegin();
  const bool log2 = chart.x_log2 && xlo > 0;
  std::vector<double> xticks;
  if (chart.bars || xs.size() <= 12) {
    xticks.assign(xs.begin(), xs.end());
  } else {
    xticks = nice_ticks(xlo, xhi);
  }
  const double tlo = chart.bars ? xlo - 0.5 : std::min(xlo, xticks.front());
  const double thi = chart.bars ? xhi + 0.5 : std::max(xhi, xticks.back());
  auto xpos = [&](double x) {
    if (thi == tlo) return kLeft + plot_w / 2;
    const double f = log2 ? (std::log2(x) - std::log2(tlo)) / (std::log2(thi) - std::log2(tlo)) : (x - tlo) / (thi - tlo);
    const double pad = chart.bars ? 0 : 0.04;
    return kLeft + plot_w * (pad + f * (1 - 2 * pad));
  };
  // Grid and axes.
  for (double t : yticks) {
    svg += fmt::format("<line x1=\"{}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e4e4e4\"/>\n", kLeft,
                       kLeft + plot_w, ypos(t), ypos(t));
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{}</text>\n", kLeft - 6,
                       ypos(t) + 4, chart.y_percent ? number(100 * t) + "%" : number(t));
  }
  double last_label = -1e9;
  for (double t : xticks) {
    if (log2 && t <= 0) continue;
    if (xpos(t) - last_label < 34) continue;  // labels would overlap
    last_label = xpos(t);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n", xpos(t),
                       kTop + plot_h + 16, number(t));
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#888\"/>\n", kLeft,
                     kTop, plot_w, plot_h);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n",
                     kLeft + plot_w / 2, kTop + plot_h + 36, xml_escape(chart.x_label + (log2 ? " (log scale)" : "")));
  svg += fmt::format("<text transform=\"translate(16,{:.1f}) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n",
                     kTop + plot_h / 2, xml_escape(chart.y_label));
  // Data.
  const std::size_t n = chart.series.size();
  for (std::size_t i = 0; i < n; ++i) {
    const auto& s = chart.series[i];
    const std::size_t slot = s.color >= 0 ? static_cast<std::size_t>(s.color) : i;
    const char* color = kColors[slot % std::size(kColors)];
    auto points = s.points;
    std::sort(points.begin(), points.end());
    if (chart.bars) {
      const double group = plot_w / (thi - tlo) * 0.8;
      const double bar = group / static_cast<double>(n);
      for (const auto& [x, y] : points) {
        const double left = xpos(x) - group / 2 + bar * static_cast<double>(i);
        svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}: {}"
                           "</title></rect>\n",
                           left, ypos(y), std::max(bar - 1, 1.0), ypos(ylo) - ypos(y), color, xml_escape(s.label), number(y));
      }
      continue;
    }
    std::string path;
    for (const auto& [x, y] : points) path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", xpos(x), ypos(y));
    const char* dash = kDashes[(slot / std::size(kColors)) % std::size(kDashes)];
    svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", path, color,
                       *dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "");
    for (const auto& [x, y] : points) {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}: ({}, {})</title></circle>\n",
                         xpos(x), ypos(y), color, xml_escape(s.label), number(x),
                         chart.y_percent ? number(100 * y) + "%" : number(y));
    }
  }
  if (chart.y_reference) {
    const double y = ypos(*chart.y_reference);
    svg += fmt::format("<line x1=\"{}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#C00\" stroke-dasharray=\"6,4\"/>\n",
                       kLeft, kLeft + plot_w, y, y);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#C00\" text-anchor=\"end\">{}</text>\n",
                       kLeft + plot_w - 4, y - 4, xml_escape(chart.y_reference_label));
  }
  // Legend.
  for (std::size_t i = 0; i < n; ++i) {
    const double y = kTop + 8 + 18 * static_cast<double>(i);
    const int c = chart.series[i].color;
    const char* color = kColors[(c >= 0 ? static_cast<std::size_t>(c) : i) % std::size(kColors)];
    svg += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"14\" height=\"10\" fill=\"{}\"/>\n", kWidth + 4, y - 9, color);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"11\">{}</text>\n", kWidth + 24, y, xml_escape(chart.series[i].label));
  }
  return svg + "</g>\n";
}

}  // namespace

std::string render_charts(const std::vector<Chart>& charts) {
  // Each chart is as tall as its plot or its legend, whichever is taller.
  std::vector<double> tops;
  double height = 0;
  for (const auto& chart : charts) {
    tops.push_back(height);
    height += std::max(kHeight, kTop + 18.0 * static_cast<double>(chart.series.size()) + 20);
  }
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      kWidth + kLegend, height, kWidth + kLegend, height);
  for (std::size_t i = 0; i < charts.size(); ++i) svg += render_one(charts[i], tops[i]);
  return svg + "</svg>\n";
}

}  // namespace zb::sweep
