// One row of results per schedule, and the table/JSON/CSV forms zbsim prints.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "sim/schedule/problem_spec.h"
#include "sim/schedule/trace.h"

namespace zb::cli {

// ok: ran; over-limit: ran but its peak memory exceeds the limit; unsupported: the generator
// cannot build this shape; infeasible: no schedule fits the limit.
struct ResultRow {
  std::string schedule;
  std::string status = "ok";
  std::string reason;
  int chunks = 1;
  bool has_metrics = false;
  Metrics metrics;
  std::vector<std::pair<std::string, double>> extras;  // engine-specific numbers (e.g. step times)
};

enum class Format { table, json, csv };
Format parse_format(const std::string& text);

// The JSON object of docs/design.md section 8: {"problem": {...}, "results": [...]}.
nlohmann::json results_json(const ProblemSpec& spec, const std::vector<ResultRow>& rows);
std::string results_text(const ProblemSpec& spec, const std::vector<ResultRow>& rows, Format format);

}  // namespace zb::cli
