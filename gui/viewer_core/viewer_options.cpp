// zbview's command line (see viewer_options.h).
#include "gui/viewer_core/viewer_options.h"

#include <algorithm>
#include <sstream>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/cli/common/command_line.h"
#include "sim/cli/common/problem_flags.h"
#include "sim/support/error.h"

namespace zb::view {

namespace po = boost::program_options;

namespace {

po::options_description describe_options() {
  po::options_description files(
      "Files (trace JSON from zbsim/zbexec, torch.profiler traces (a file per rank), scenario JSON, schedule text or "
      "JSON, PyTorch pipeline CSV)");
  files.add_options()
      ("help,h", "show this help")
      ("version", "print the version and exit")
      ("scenario", po::value<std::string>(), "scenario file (JSON with a \"problem\" object)")
      ("file", po::value<std::vector<std::string>>()->composing(), "any file (also positional)");
  po::options_description problem("Explorer problem (as zbsim)");
  problem.add_options()
      ("schedules", po::value<std::string>(), "schedules to compare, e.g. 1f1b,zb-h1,zb-h2; none: only the files given");
  cli::add_problem_flags(problem);
  problem.add_options()
      ("model", po::value<std::string>(), "derive costs from a transformer preset (models/transformers)")
      ("hardware", po::value<std::string>(), "the GPU preset for --model (models/hardware), default h100-sxm")
      ("microbatch-size", po::value<int>(), "sequences per microbatch for --model (default 1)")
      ("engine", po::value<std::string>(), "also run on: eval (default: only the evaluator) | simgrid")
      ("cluster", po::value<std::string>(),
       "simgrid: a cluster preset name (models/clusters), or 'ideal' (default; latency = t_comm, no bandwidth "
       "limit)");
  po::options_description output("Headless output");
  output.add_options()
      ("screenshot", po::value<std::string>(), "render the window offscreen to a PNG and exit")
      ("svg", po::value<std::string>(), "render the timeline to an SVG and exit")
      ("size", po::value<std::string>(), "window size WxH (default 1400x900)")
      ("arrows", "draw communication arrows")
      ("no-memory", "hide the memory charts");
  po::options_description all;
  all.add(files).add(problem).add(output);
  return all;
}

template <typename T>
std::optional<T> get(const po::variables_map& vm, const char* name) {
  if (!vm.count(name)) return std::nullopt;
  return vm[name].as<T>();
}

}  // namespace

std::string viewer_usage() {
  std::ostringstream out;
  out << "usage: zbview [FILE ...] [options]\n"
         "Timeline viewer and bubble explorer for pipeline-parallel schedules.\n\n"
      << describe_options()
      << "\nexamples:\n"
         "  zbview --p 8 --m 24 --tf 18.522 --tb 18.086 --tw 9.337 --tcomm 0.601 --schedules 1f1b,zb-h1,zb-v\n"
         "  zbview sim.trace.json measured.trace.json          # a simulated and a measured run side by side\n"
         "  zbview zb-h2.csv --tf 1 --tb 1 --tw 1 --screenshot zb-h2.png\n";
  return out.str();
}

ViewerOptions parse_viewer_args(const std::vector<std::string>& args) {
  ViewerOptions options;
  po::positional_options_description positional;
  positional.add("file", -1);
  for (const std::string& arg : args) {
    if (arg == "--trace" || arg.starts_with("--trace=")) {
      throw InputError("zbview: --trace was renamed: give the files to open as arguments (zbview t.json); "
                       "--trace is an output in zbsim and zbexec");
    }
  }
  po::variables_map vm;
  try {
    const po::options_description described = describe_options();
    po::store(po::command_line_parser(args).options(described).positional(positional).run(), vm);
    po::notify(vm);
    cli::refuse_empty_values(vm, described);
  } catch (const po::error& e) {
    throw InputError(fmt::format("zbview: {}", e.what()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("zbview: {}", e.what()));
  }
  options.help = vm.count("help") > 0;
  if (auto files = get<std::vector<std::string>>(vm, "file")) options.files = *files;
  options.scenario = get<std::string>(vm, "scenario");
  options.schedules = get<std::string>(vm, "schedules");
  options.problem_flags = cli::given_problem_flags(vm);
  ProblemSpec checked;  // bad values fail here, naming the flag, before any window opens
  for (const catalog::GivenField& given : options.problem_flags) given.apply(checked);
  options.engine = get<std::string>(vm, "engine");
  options.cluster = get<std::string>(vm, "cluster");
  if (options.cluster && options.engine.value_or("eval") != "simgrid") {
    throw InputError("zbview: --cluster applies to --engine simgrid only");
  }
  options.model = get<std::string>(vm, "model");
  options.hardware = get<std::string>(vm, "hardware");
  if (auto b = get<int>(vm, "microbatch-size")) {
    if (*b < 1) throw InputError(fmt::format("zbview: --microbatch-size must be >= 1, got {}", *b));
    options.microbatch_size = *b;
  }
  if (options.hardware && !options.model) throw InputError("zbview: --hardware needs --model");
  options.screenshot = get<std::string>(vm, "screenshot");
  options.svg = get<std::string>(vm, "svg");
  options.show_arrows = vm.count("arrows") > 0;
  options.show_memory = vm.count("no-memory") == 0;
  if (auto size = get<std::string>(vm, "size")) {
    int w = 0, h = 0;
    char x = 0;
    std::istringstream in(*size);
    if (!(in >> w >> x >> h) || x != 'x' || w < 200 || h < 150 || w > 10000 || h > 10000) {
      throw InputError(fmt::format("zbview: --size: expected WxH between 200x150 and 10000x10000, got \"{}\"", *size));
    }
    options.width_px = w;
    options.height_px = h;
  }
  for (const catalog::GivenField& given : options.problem_flags) {
    if (given.field->kind == ProblemField::Kind::integer && checked.*given.field->integer < 1) {
      throw InputError(fmt::format("zbview: --p, --m and --chunks must be >= 1, got {}", checked.*given.field->integer));
    }
  }
  return options;
}

ProblemSpec default_problem_spec() {
  ProblemSpec spec;
  spec.devices = 4;
  spec.microbatches = 8;
  spec.t_f = {1.0};
  spec.t_b = {1.0};
  spec.t_w = {1.0};
  return spec;
}

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> names;
  if (text == "none") return names;  // only the files given: no explorer groups
  std::string current;
  for (char c : text + ",") {
    if (c == ',') {
      if (!current.empty()) names.push_back(current);
      current.clear();
    } else if (c != ' ') {
      current += c;
    }
  }
  return names;
}

int find_engine(const std::vector<std::string>& labels, const std::string& engine,
                const std::optional<std::string>& cluster) {
  std::vector<std::string> clusters;  // the presets the labels offer, "SimGrid: NAME"
  for (std::size_t i = 1; i < labels.size(); ++i) {
    if (labels[i].find("ideal") == std::string::npos) clusters.push_back(labels[i].substr(labels[i].find(": ") + 2));
  }
  if (engine == "eval" || engine == "evaluator") {
    if (cluster) throw InputError("zbview: --cluster applies to --engine simgrid only");
    return 0;
  }
  if (engine != "simgrid") {
    const bool is_cluster = std::find(clusters.begin(), clusters.end(), engine) != clusters.end();
    throw InputError(fmt::format("zbview: --engine '{}': expected eval or simgrid{}", engine,
                                 is_cluster ? fmt::format(" (a cluster: --engine simgrid --cluster {})", engine) : ""));
  }
  if (labels.size() <= 1) throw InputError("zbview: --engine simgrid: zbview was built without SimGrid");
  const std::string wanted = cluster.value_or("ideal");
  for (std::size_t i = 1; i < labels.size(); ++i) {
    const bool ideal = labels[i].find("ideal") != std::string::npos;
    if ((ideal && wanted == "ideal") || labels[i] == "SimGrid: " + wanted) return static_cast<int>(i);
  }
  throw InputError(fmt::format("zbview: --cluster '{}': no such cluster preset (known: ideal{}{})", wanted,
                               clusters.empty() ? "" : ", ", fmt::join(clusters, ", ")));
}

ProblemSpec apply_problem_flags(ProblemSpec spec, const ViewerOptions& options) {
  for (const catalog::GivenField& given : options.problem_flags) given.apply(spec);
  return spec;
}

}  // namespace zb::view
