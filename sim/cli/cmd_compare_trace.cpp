// zbsim compare-trace: a measured trace (torch.profiler files of PyTorch's pipeline runtime, one
// per rank, or a trace of ours from zbexec) against a simulated one (zbsim simulate --trace).
#include <fmt/format.h>

#include <iostream>

#include "sim/app/catalog/trace_files.h"
#include "sim/cli/commands.h"
#include "sim/cli/common/problem_options.h"
#include "sim/app/catalog/result_table.h"
#include "sim/app/catalog/trace_comparison.h"
#include "sim/support/error.h"

namespace zb::cli {

namespace po = boost::program_options;

namespace {

std::string label_of(const std::vector<std::string>& paths, const Trace& trace) {
  std::string files = paths.front();
  if (paths.size() > 1) files += fmt::format(" + {} more", paths.size() - 1);
  const std::string engine = trace.meta.engine.empty() ? std::string("eval") : trace.meta.engine;
  return trace.meta.schedule.empty() ? fmt::format("{} ({})", files, engine)
                                     : fmt::format("{} ({}, {})", files, trace.meta.schedule, engine);
}

}  // namespace

int run_compare_trace(int argc, char** argv) {
  po::options_description options("Compare traces");
  options.add_options()
      ("measured", po::value<std::vector<std::string>>()->multitoken()->required(),
       "the measured run: torch.profiler traces of PyTorch's pipeline runtime (one file per rank, any order), Nsight "
       "Systems exports of it (nsys export --type sqlite: one per rank, or one holding every process; its \"PP:\" NVTX "
       "ranges timed by the kernels they launched), or one trace JSON of ours (zbexec run --trace)")
      ("simulated", po::value<std::vector<std::string>>()->multitoken()->required(),
       "the simulation: a trace JSON (zbsim simulate --trace), or torch.profiler or Nsight Systems files of another "
       "run")
      ("format", po::value<std::string>()->default_value("table"), "table | json | csv");
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim compare-trace --measured F [F ...] --simulated G [--format table|json|csv]",
                          "  zbsim export --schedule zb-h1 --p 2 --m 4 --to pytorch-csv --out zb-h1.csv\n"
                          "  /usr/bin/python3 tests/data/kineto/make_trace.py --schedule zb-h1.csv --out-dir run\n"
                          "  zbsim simulate --schedule-file zb-h1.csv --tf 20 --tb 15 --tw 18 --trace sim.json\n"
                          "  zbsim compare-trace --measured run/zb-h1.rank0.json run/zb-h1.rank1.json --simulated sim.json")) {
    return 0;
  }
  const Format format = parse_format(values["format"].as<std::string>());
  const auto measured_files = values["measured"].as<std::vector<std::string>>();
  const auto simulated_files = values["simulated"].as<std::vector<std::string>>();
  const Trace measured = catalog::read_trace_files(measured_files);
  const Trace simulated = catalog::read_trace_files(simulated_files);
  const TraceComparison comparison =
      compare_traces(measured, label_of(measured_files, measured), simulated, label_of(simulated_files, simulated));
  std::cout << comparison_text(comparison, format);
  return 0;
}

}  // namespace zb::cli
