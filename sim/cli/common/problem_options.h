// The problem flags every subcommand shares, and scenario files (--scenario) they override.
#pragma once

#include <boost/program_options.hpp>

#include <initializer_list>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <vector>

#include "models/hardware.h"
#include "sim/app/catalog/engines.h"
#include "sim/core/problem_spec.h"
#include "sim/app/catalog/scenario.h"

namespace zb::cli {

// Scenario files live in the catalog (sim/app/catalog/scenario.h), shared with the viewer and Python.
using zb::derive_model_costs;
using zb::load_scenario;
using zb::Scenario;
using zb::scenario_cluster_file;
using zb::scenario_from_json;

// --scenario and the problem flags of the catalog (one per problem field); --mem-limit also takes
// "auto" for model-driven scenarios.
boost::program_options::options_description problem_options();

// The scenario named by --scenario (if any) with every problem flag given applied on top.
Scenario scenario_from_options(const boost::program_options::variables_map& options);

// --steps and --rollback-rate (compare, simulate): the steady-state step times of the rows.
boost::program_options::options_description step_options();
// Copies them into an engine's options.
void apply_step_options(const boost::program_options::variables_map& options, catalog::EngineOptions& engine);

// --cost-model: "calibrated" or "roofline" (models/hardware.h); InputError naming the flag otherwise.
models::CostModel parse_cost_model(const std::string& text);

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& text);

// Parses argv with the given options; no positional arguments. Returns false after printing
// help when --help was given. The flags named in `outputs` that were given are checked writable
// here, before any work, so one bad output path never leaves the others written.
bool parse_command_line(int argc, char** argv, const boost::program_options::options_description& options,
                        boost::program_options::variables_map& values, const char* usage, const char* example,
                        std::initializer_list<const char*> outputs = {});

}  // namespace zb::cli
