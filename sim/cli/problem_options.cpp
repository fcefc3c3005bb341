// Problem flags, scenario files and command-line parsing shared by the subcommands.
#include "problem_options.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "error.h"

namespace zb::cli {

namespace po = boost::program_options;


po::options_description problem_options() {
  po::options_description options("Problem (a scenario file, flags, or both: flags override the file)");
  options.add_options()
      ("scenario", po::value<std::string>(), "scenario JSON file (see scenarios/)")
      ("p", po::value<int>(), "devices (pipeline stages when chunks = 1)")
      ("m", po::value<int>(), "microbatches per step")
      ("chunks", po::value<int>(), "chunks (stages) per device, default 1")
      ("placement", po::value<std::string>(), "linear | interleaved | vshape (default: linear, or interleaved when chunks > 1)")
      ("tf", po::value<std::string>(), "forward time per device: X, or a list per device or per stage")
      ("tb", po::value<std::string>(), "input-gradient backward time (B)")
      ("tw", po::value<std::string>(), "weight-gradient backward time (W)")
      ("tbw", po::value<std::string>(), "fused backward time (default tb + tw)")
      ("tcomm", po::value<std::string>(), "transfer time between neighbouring devices (default 0)")
      ("mem-f", po::value<std::string>(), "activation memory added by F (default 1 = M_B)")
      ("mem-b", po::value<std::string>(), "activation memory added by B (default -0.5)")
      ("mem-w", po::value<std::string>(), "activation memory added by W (default -0.5)")
      ("mem-limit", po::value<std::string>(), "activation memory limit: a number, or Np for N*p*M_B (e.g. 2p), or auto (model-driven scenarios: from device memory)")
      ("bytes-act", po::value<double>(), "activation bytes per microbatch between stages (SimGrid engine)")
      ("time-unit", po::value<std::string>(), "unit of the times (default ms)");
  return options;
}

Scenario scenario_from_options(const po::variables_map& options) {
  Scenario scenario;
  scenario.source = "command line";
  if (options.count("scenario")) scenario = load_scenario(options["scenario"].as<std::string>());
  ProblemSpec& spec = scenario.spec;
  if (options.count("p")) spec.devices = options["p"].as<int>();
  if (options.count("m")) spec.microbatches = options["m"].as<int>();
  if (options.count("chunks")) spec.chunks = options["chunks"].as<int>();
  if (options.count("placement")) {
    spec.placement = parse_placement(options["placement"].as<std::string>(), "--placement");
  }
  const std::pair<const char*, std::vector<double>*> lists[] = {
      {"tf", &spec.t_f},       {"tb", &spec.t_b},       {"tw", &spec.t_w},       {"tbw", &spec.t_bw},
      {"tcomm", &spec.t_comm}, {"mem-f", &spec.mem_f}, {"mem-b", &spec.mem_b}, {"mem-w", &spec.mem_w}};
  const char* fields[] = {"t_f", "t_b", "t_w", "t_bw", "t_comm", "mem_f", "mem_b", "mem_w"};
  for (std::size_t i = 0; i < std::size(lists); ++i) {
    const auto& [flag, target] = lists[i];
    if (!options.count(flag)) continue;
    *target = parse_number_list(options[flag].as<std::string>(), fmt::format("--{}", flag));
    scenario.explicit_fields.insert(fields[i]);
  }
  if (options.count("mem-limit")) {
    const std::string limit = options["mem-limit"].as<std::string>();
    if (limit == "auto") {
      // The limit from device memory: model-driven scenarios only.
      if (!scenario.model_driven()) {
        throw InputError("--mem-limit auto: needs a model-driven scenario (--scenario with a 'model' field)");
      }
      scenario.explicit_fields.erase("mem_limit");
    } else {
      spec.mem_limit = MemoryLimit::parse(limit, "--mem-limit");
      scenario.explicit_fields.insert("mem_limit");
    }
  }
  if (options.count("bytes-act")) {
    spec.bytes_act = options["bytes-act"].as<double>();
    scenario.explicit_fields.insert("bytes_act");
  }
  if (options.count("time-unit")) {
    spec.time_unit = options["time-unit"].as<std::string>();
    scenario.explicit_fields.insert("time_unit");
  }
  derive_model_costs(scenario);
  return scenario;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    if (comma > start) items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

bool parse_command_line(int argc, char** argv, const po::options_description& options, po::variables_map& values,
                        const char* usage, const char* example) {
  po::options_description all = options;
  all.add_options()("help,h", "show this help");
  po::store(po::command_line_parser(argc, argv).options(all).run(), values);
  if (values.count("help")) {
    std::cout << "usage: " << usage << "\n\n" << all << "\nexample:\n" << example << "\n";
    return false;
  }
  po::notify(values);
  return true;
}

}  // namespace zb::cli
