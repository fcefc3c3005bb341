// A hand-written SVG scatter (no chart library: a few dozen elements).
#include "sim/app/validate/scatter_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "sim/formats/svg_text.h"

namespace zb::validate {

namespace {

// Tableau 10: distinct, and readable by most colour-blind readers.
constexpr std::array<std::string_view, 10> kPalette = {"#4E79A7", "#F28E2B", "#E15759", "#76B7B2", "#59A14F",
                                                       "#EDC948", "#B07AA1", "#FF9DA7", "#9C755F", "#BAB0AC"};
constexpr double kPlot = 520;  // the square plot area (px)
constexpr double kLeft = 80, kTop = 60, kLegend = 190;

}  // namespace

std::string validation_scatter_svg(const Validation& v) {
  double low = 1e300, high = 0;
  std::map<std::string, std::size_t> colour;
  for (const RowResult& r : v.rows) {
    if (!r.covered()) continue;
    low = std::min({low, *r.measured, *r.predicted});
    high = std::max({high, *r.measured, *r.predicted});
    colour.emplace(r.source, 0);
  }
  std::size_t next = 0;
  for (auto& [source, index] : colour) index = next++ % kPalette.size();
  if (!(high > 0)) low = 1, high = 10;
  const double lo = std::floor(std::log10(low)), hi = std::max(lo + 1, std::ceil(std::log10(high)));
  const auto x_of = [&](double value) { return kLeft + (std::log10(value) - lo) / (hi - lo) * kPlot; };
  const auto y_of = [&](double value) { return kTop + kPlot - (std::log10(value) - lo) / (hi - lo) * kPlot; };
  const double width = kLeft + kPlot + kLegend, height = kTop + kPlot + 60;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height);
  s += fmt::format("<text x=\"{}\" y=\"24\" font-size=\"15\">Predicted vs measured tokens/s per GPU ({} rows)</text>\n", kLeft,
                   v.covered);
  s += fmt::format("<text x=\"{}\" y=\"42\" fill=\"#555\">{}, {}; median |e| {:.1f}%, p90 |e| {:.1f}% over {} counted rows</text>\n",
                   kLeft, xml_escape(v.path), v.engine == "simgrid" ? "SimGrid" : "evaluator", 100 * v.overall.median_abs,
                   100 * v.overall.p90_abs, v.overall.n);
  // Decade grid and labels.
  for (double e = lo; e <= hi; ++e) {
    const double value = std::pow(10.0, e);
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>\n", x_of(value), kTop, kTop + kPlot);
    s += fmt::format("<line x1=\"{1:.1f}\" y1=\"{0:.1f}\" x2=\"{2:.1f}\" y2=\"{0:.1f}\" stroke=\"#ddd\"/>\n", y_of(value), kLeft, kLeft + kPlot);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:g}</text>\n", x_of(value), kTop + kPlot + 18, value);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", kLeft - 6, y_of(value) + 4, value);
  }
  const double a = std::pow(10.0, lo), b = std::pow(10.0, hi);
  s += fmt::format("<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" fill=\"#888\" opacity=\"0.12\"/>\n",
                   x_of(a), y_of(a * 1.2), x_of(b / 1.2), y_of(b), x_of(b), y_of(b / 1.2 * 1.0), x_of(a * 1.2), y_of(a));
  s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>\n",
                   x_of(a), y_of(a), x_of(b), y_of(b));
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", kLeft, kTop, kPlot, kPlot);
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">measured tokens/s per GPU (log)</text>\n",
                   kLeft + kPlot / 2, kTop + kPlot + 40);
  s += fmt::format("<text transform=\"translate(22 {:.1f}) rotate(-90)\" text-anchor=\"middle\">predicted tokens/s per GPU (log)</text>\n",
                   kTop + kPlot / 2);
  for (const RowResult& r : v.rows) {
    if (!r.covered()) continue;
    const std::string_view c = kPalette[colour.at(r.source)];
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" {}><title>{} {}: measured {:.1f}, predicted {:.1f} ({:+.1f}%)</title></circle>\n",
                     x_of(*r.measured), y_of(*r.predicted),
                     r.counts() ? fmt::format("fill=\"{}\" fill-opacity=\"0.8\"", c) : fmt::format("fill=\"none\" stroke=\"{}\"", c),
                     xml_escape(r.id), xml_escape(r.model), *r.measured, *r.predicted, 100 * r.error());
  }
  double y = kTop + 10;
  const double x = kLeft + kPlot + 20;
  for (const auto& [source, index] : colour) {
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x, y,
                     kPalette[index], x + 10, y + 4, xml_escape(source));
    y += 18;
  }
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#555\">dashed: y = x; band: +-20%</text>\n", x, y + 10);
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#555\">rings: not counted</text>\n", x, y + 28);
  return s + "</svg>\n";
}

}  // namespace zb::validate
