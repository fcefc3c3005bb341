// The charts of a sweep's results: bubble rate vs m, throughput vs memory limit, peak memory per
// device; series are the schedules and the inputs that vary between the rows.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/app/sweep/chart.h"
#include "sim/app/sweep/table.h"

namespace zb::sweep {

enum class ChartKind { bubble, throughput, memory, all };

// "bubble", "throughput", "memory" or "all"; InputError naming --chart otherwise.
ChartKind parse_chart_kind(const std::string& text);

struct PlotOptions {
  ChartKind kind = ChartKind::all;
  std::vector<std::string> where;  // COLUMN=VALUE: keep only the rows that have it
};

struct Plot {
  std::vector<Chart> charts;
  std::size_t rows = 0;  // rows drawn (status ok, after `where`)
};

// The charts for the rows of `table` read from `source` (named in the subtitle and in errors).
// InputError when the table is not a sweep's results, a `where` item names no column, no row is
// ok, or there is nothing to draw.
Plot plot_results(const Table& table, const std::string& source, const PlotOptions& options);

}  // namespace zb::sweep
