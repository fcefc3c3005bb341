// Subcommand dispatch and exit codes (see subcommands.h).
#include "sim/cli/common/subcommands.h"

#include <boost/program_options/errors.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>

#include "sim/app/catalog/version.h"
#include "sim/support/error.h"

namespace zb::cli {

namespace {

void print_usage(const Tool& tool, std::span<const Subcommand> subcommands) {
  fmt::print("{}: {}\n\nusage: {} <command> [options]     ({} <command> --help for its options)\n\ncommands:\n",
             tool.name, tool.description, tool.name, tool.name);
  std::size_t width = 10;  // the longest name ("compare-trace") sets the summaries' column
  for (const auto& command : subcommands) width = std::max(width, std::string_view(command.name).size());
  for (const auto& command : subcommands) fmt::print("  {:<{}} {}\n", command.name, width, command.summary);
  fmt::print("\nexample:\n  {}\n\nexit codes: {}\n", tool.example, tool.exit_codes);
}

}  // namespace

int run_subcommands(const Tool& tool, std::span<const Subcommand> subcommands, int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    print_usage(tool, subcommands);
    std::fflush(stdout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    fmt::print("{} {}\n", tool.name, catalog::version());
    return 0;
  }
  const std::string_view name = argv[1];
  for (const auto& command : subcommands) {
    if (name != command.name) continue;
    try {
      return command.run(argc - 1, argv + 1);
    } catch (const InputError& e) {
      fmt::print(stderr, "{} {}: error: {}\n", tool.name, name, e.what());
      return 2;
    } catch (const boost::program_options::error& e) {
      fmt::print(stderr, "{} {}: error: {} (see {} {} --help)\n", tool.name, name, e.what(), tool.name, name);
      return 2;
    } catch (const std::exception& e) {
      fmt::print(stderr, "{} {}: {}: {}\n", tool.name, name, tool.failure, e.what());
      return 1;
    }
  }
  fmt::print(stderr, "{}: error: unknown command '{}' (see {} --help)\n", tool.name, name, tool.name);
  return 2;
}

}  // namespace zb::cli
