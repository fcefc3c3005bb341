// A sweep grid: a base scenario and axes whose cartesian product gives the points of a sweep.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace zb::cli {

// One axis: a scenario field (or "schedule", "engine") and the values it takes.
struct SweepAxis {
  std::string key;
  std::vector<nlohmann::json> values;
};

// One point of the grid, ready to run.
struct SweepPoint {
  long index = 0;
  nlohmann::ordered_json axes;  // key -> value of this point, in axis order
  nlohmann::json scenario;      // the base scenario with the axis values applied
  std::string schedule;
  std::string engine = "eval";
};

// {"name", "description", "scenario": FILE, "base": {...}, "engine": "eval", "axes": {...}}: the
// scenario file (relative to the grid) and the inline base merge (base wins; "problem" merges
// field by field); axes are applied in file order and the last axis varies fastest. Without a
// "schedule" axis the base's "schedules" list becomes the last axis.
struct SweepGrid {
  std::string source;    // the grid file
  std::string base_dir;  // its folder: relative preset paths start here
  std::string name;
  nlohmann::json base = nlohmann::json::object();
  std::string engine = "eval";
  std::vector<SweepAxis> axes;

  long size() const;
  SweepPoint point(long index) const;
  // Axis keys that are not among the fixed result columns (they get their own column).
  std::vector<std::string> extra_columns() const;
};

// Reads and checks a grid file: structure, axis names and types, schedule and engine names, and
// every axis value once (applied to the first point). Errors are InputErrors naming the file, the
// field and the value.
SweepGrid load_sweep_grid(const std::string& path);

}  // namespace zb::cli
