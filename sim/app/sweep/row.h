// One sweep point run into one result row, in its CSV and JSON-lines forms.
#pragma once

#include <string>
#include <vector>

#include "sim/app/sweep/grid.h"

namespace zb::sweep {

// Inputs every row carries (axis values as written, plus what the problem became).
const std::vector<std::string>& input_columns();
// Metrics every row carries.
const std::vector<std::string>& metric_columns();
// "point", the extra axis columns, the inputs, the metrics.
std::vector<std::string> result_columns(const Grid& grid);
std::string csv_header(const Grid& grid);

struct Row {
  long point = 0;
  std::string status;
  std::string csv_line;   // no newline
  std::string json_line;  // no newline; {"point", "axes", then the columns}
};

// Runs one point. Never throws for a point that cannot run: a model that does not fit, a shape
// a generator cannot build or an invalid combination become rows with a status and a reason.
Row run_point(const Grid& grid, const Point& point);

// The row of a point that could not be run at all (its worker process died on it twice): the
// inputs, status "error" and the reason.
Row failed_point_row(const Grid& grid, const Point& point, const std::string& reason);

}  // namespace zb::sweep
