// zbsim: entry point, subcommand dispatch and the one place errors become exit codes.
#include <boost/program_options/errors.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>

#include "commands.h"
#include "error.h"

namespace {

struct Subcommand {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
};

constexpr Subcommand kSubcommands[] = {
    {"compare", "compare schedules on one problem: span, bubble rate, memory", zb::cli::run_compare},
    {"simulate", "run one schedule through an engine and write its trace", zb::cli::run_simulate},
    {"export", "write a schedule as text, JSON, PyTorch CSV, SVG or Chrome trace", zb::cli::run_export},
#ifdef ZB_HAVE_SOLVER
    {"solve", "the ILP optimum (zb-ilp) under a memory limit: status, span, bound, gap", zb::cli::run_solve},
    {"frontier", "bubble rate of zb-auto (and zb-ilp) against the memory limit, 1p..3p", zb::cli::run_frontier},
#endif
    {"sweep", "run a grid of scenarios in parallel into CSV and JSON lines", zb::cli::run_sweep},
    {"plot", "SVG charts from sweep results: bubble vs m, throughput, peak memory", zb::cli::run_plot},
};

void print_usage() {
  std::fputs(
      "zbsim: design, compare and verify pipeline-parallel schedules (Zero Bubble and friends)\n\n"
      "usage: zbsim <command> [options]     (zbsim <command> --help for its options)\n\ncommands:\n",
      stdout);
  for (const auto& command : kSubcommands) std::printf("  %-10s %s\n", command.name, command.summary);
  std::fputs(
      "\nexample:\n"
      "  zbsim compare --p 4 --m 8 --tf 1 --tb 1 --tw 1\n\n"
      "exit codes: 0 ok, 2 bad input, 1 internal failure\n",
      stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::puts("zbsim 0.1.0");
    return 0;
  }
  const std::string_view name = argv[1];
  for (const auto& command : kSubcommands) {
    if (name != command.name) continue;
    try {
      return command.run(argc - 1, argv + 1);
    } catch (const zb::InputError& e) {
      fmt::print(stderr, "zbsim {}: error: {}\n", name, e.what());
      return 2;
    } catch (const boost::program_options::error& e) {
      fmt::print(stderr, "zbsim {}: error: {} (see zbsim {} --help)\n", name, e.what(), name);
      return 2;
    } catch (const std::exception& e) {
      fmt::print(stderr, "zbsim {}: internal error: {}\n", name, e.what());
      return 1;
    }
  }
  fmt::print(stderr, "zbsim: error: unknown command '{}' (see zbsim --help)\n", name);
  return 2;
}
