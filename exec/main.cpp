// zbexec: entry point, subcommand dispatch and the one place errors become exit codes.
#include <boost/program_options/errors.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>

#include "exec/commands.h"
#include "sim/schedule/error.h"

namespace {

struct Subcommand {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
};

constexpr Subcommand kSubcommands[] = {
    {"run", "run a schedule for real (training steps), optionally verify and predict", zb::exec::cli::run_run},
    {"calibrate", "measure per-stage F/B/W times, t_comm and memory; write a scenario for zbsim",
     zb::exec::cli::run_calibrate},
};

void print_usage() {
  std::fputs(
      "zbexec: run pipeline-parallel schedules for real (the same schedules zbsim simulates)\n\n"
      "usage: zbexec <command> [options]     (zbexec <command> --help for its options)\n\ncommands:\n",
      stdout);
  for (const auto& command : kSubcommands) std::printf("  %-10s %s\n", command.name, command.summary);
  std::fputs(
      "\nexample:\n"
      "  zbexec run --backend cpu --schedule zb-h1 --p 4 --m 8 --layers 8 --hidden 256 --steps 3 --verify\n\n"
      "exit codes: 0 ok, 2 bad input, 1 failure (including --verify finding a difference)\n",
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
    std::puts("zbexec 0.1.0");
    return 0;
  }
  const std::string_view name = argv[1];
  for (const auto& command : kSubcommands) {
    if (name != command.name) continue;
    try {
      return command.run(argc - 1, argv + 1);
    } catch (const zb::InputError& e) {
      fmt::print(stderr, "zbexec {}: error: {}\n", name, e.what());
      return 2;
    } catch (const boost::program_options::error& e) {
      fmt::print(stderr, "zbexec {}: error: {} (see zbexec {} --help)\n", name, e.what(), name);
      return 2;
    } catch (const std::exception& e) {
      fmt::print(stderr, "zbexec {}: failure: {}\n", name, e.what());
      return 1;
    }
  }
  fmt::print(stderr, "zbexec: error: unknown command '{}' (see zbexec --help)\n", name);
  return 2;
}
