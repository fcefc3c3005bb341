// A sweep grid: a base scenario and axes whose cartesian product gives the points of a sweep.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace zb::sweep {

// One axis: a scenario field (or "schedule", "engine") and the values it takes.
struct Axis {
  std::string key;
  std::vector<nlohmann::json> values;
};

// One point of the grid, ready to run.
struct Point {
  long index = 0;
  long of = 0;  // the number of points in its grid (written in each JSON line, checked by merges)
  nlohmann::ordered_json axes;  // key -> value of this point, in axis order
  nlohmann::json scenario;      // the base scenario with the axis values applied
  std::string schedule;
  std::string engine = "eval";
};

// The most points a grid may have. A sweep keeps every row in memory to rewrite its files in
// point order (over 1 KB per point for the CSV and JSON lines together), and at the evaluator's
// fraction of a millisecond per point 10 million points are already hours of work and gigabytes
// of results; a larger product is a mistake in the grid file (an axis too many, or too long),
// which must fail before anything runs rather than wrap around.
constexpr long kMaxPoints = 10'000'000;

// {"name", "description", "scenario": FILE, "base": {...}, "engine": "eval", "axes": {...}}: the
// scenario file (relative to the grid) and the inline base merge (base wins; "problem" merges
// field by field); axes are applied in file order and the last axis varies fastest. Without a
// "schedule" axis the base's "schedules" list becomes the last axis.
struct Grid {
  std::string source;    // the grid file
  std::string base_dir;  // its folder: relative preset paths start here
  std::string name;
  nlohmann::json base = nlohmann::json::object();
  std::string engine = "eval";
  std::vector<Axis> axes;

  // The number of points; InputError naming the grid when it exceeds kMaxPoints.
  long size() const;
  Point point(long index) const;
  // Axis keys that are not among the fixed result columns (they get their own column).
  std::vector<std::string> extra_columns() const;
};

// Reads and checks a grid file: structure, axis names and types, schedule and engine names, and
// every axis value once (applied to the first point). Errors are InputErrors naming the file, the
// field and the value.
Grid load_grid(const std::string& path);
// The same from a parsed object (the Python module's grids); `source` names it in errors and
// relative paths start at `base_dir`.
Grid grid_from_json(const nlohmann::ordered_json& object, const std::string& source, const std::string& base_dir);

}  // namespace zb::sweep
