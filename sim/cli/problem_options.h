// The problem flags every subcommand shares, and scenario files (--scenario) they override.
#pragma once

#include <boost/program_options.hpp>

#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <vector>

#include "problem_spec.h"

namespace zb::cli {

// A scenario file: {"name", "description", "problem": {...}, "schedules": [...]}, or a
// model-driven one where "model", "hardware", "cluster", "microbatch_size", ... (models/) derive
// the costs and "problem" gives p, m and whatever should override the derived values.
struct Scenario {
  std::string source;  // file path, or "command line"
  std::string name;
  std::string description;
  ProblemSpec spec;
  std::vector<std::string> schedules;
  // Model-driven scenarios: the model-level fields as JSON text (empty for a direct problem), the
  // folder their relative paths start from, and the problem fields given explicitly (file or
  // flags), which win over the derived costs.
  std::string model_json;
  std::string base_dir;
  std::set<std::string> explicit_fields;

  bool model_driven() const;
};

Scenario load_scenario(const std::string& path);
// The same from a parsed object; base_dir anchors relative preset paths.
Scenario scenario_from_json(const nlohmann::json& object, const std::string& source, const std::string& base_dir);
// Model-driven scenarios: (re)derives the costs of scenario.spec for its p, chunks and placement.
// A direct problem is left alone.
void derive_model_costs(Scenario& scenario);

// The cluster file a model-driven scenario names (for --engine simgrid), or "" when it has none.
std::string scenario_cluster_file(const Scenario& scenario);

// --scenario, --p, --m, --chunks, --placement, --tf, --tb, --tw, --tbw, --tcomm, --mem-f, --mem-b,
// --mem-w, --mem-limit, --bytes-act, --time-unit.
boost::program_options::options_description problem_options();

// The scenario named by --scenario (if any) with every problem flag given applied on top.
Scenario scenario_from_options(const boost::program_options::variables_map& options);

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& text);

// Parses argv with the given options; no positional arguments. Returns false after printing
// help when --help was given.
bool parse_command_line(int argc, char** argv, const boost::program_options::options_description& options,
                        boost::program_options::variables_map& values, const char* usage, const char* example);

}  // namespace zb::cli
