// SVG charts for sweep results: lines (one per series) or grouped bars, stacked in one document.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace zb::sweep {

struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in x order
  int color = -1;  // palette index; -1: the series' position in the chart
};

struct Chart {
  std::string title;
  std::string subtitle;
  std::string x_label;
  std::string y_label;
  std::vector<Series> series;
  bool bars = false;        // grouped bars at integer x (e.g. devices) instead of lines
  bool y_percent = false;   // y values are fractions, labelled as percentages
  bool x_log2 = false;      // x on a log2 scale (microbatch counts)
  std::optional<double> y_reference;  // a dashed horizontal line, e.g. the memory limit
  std::string y_reference_label;
};

// One SVG with the charts one below the other; deterministic text for the same input.
std::string render_charts(const std::vector<Chart>& charts);

}  // namespace zb::sweep
