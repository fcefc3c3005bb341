// Subcommand dispatch and exit codes (see subcommands.h).
#include "sim/cli/common/subcommands.h"

#include <boost/program_options/errors.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
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

// A message for standard error that cannot end the process: where stderr cannot be written (closed,
// a full disk) the message is lost and the exit code alone tells what happened.
void tell(const std::string& message) noexcept {
  std::fwrite(message.data(), 1, message.size(), stderr);
  std::fflush(stderr);
}

// What a command wrote to standard output is only written once it is flushed: a full disk or a
// closed pipe shows here, after the command returned, and turns a success into exit 1.
int with_output_written(const Tool& tool, std::string_view name, int code) {
  errno = 0;
  std::cout.flush();  // synchronised with stdio: flushes stdout itself
  const bool stream_failed = std::cout.fail();
  const bool flush_failed = std::fflush(stdout) != 0;
  const int error = errno;  // the first failure's, where the C library kept it
  if (!stream_failed && !flush_failed && std::ferror(stdout) == 0) return code;
  tell(fmt::format("{}{}{}: error: standard output could not be written{}\n", tool.name, name.empty() ? "" : " ",
                   name, error != 0 ? fmt::format(": {}", std::strerror(error)) : std::string()));
  return code == 0 ? 1 : code;
}

int run_command(const Tool& tool, const Subcommand& command, int argc, char** argv) {
  const std::string_view name = command.name;
  try {
    return command.run(argc, argv);
  } catch (const InputError& e) {
    tell(fmt::format("{} {}: error: {}\n", tool.name, name, e.what()));
    return 2;
  } catch (const boost::program_options::error& e) {
    tell(fmt::format("{} {}: error: {} (see {} {} --help)\n", tool.name, name, e.what(), tool.name, name));
    return 2;
  } catch (const std::exception& e) {
    tell(fmt::format("{} {}: {}: {}\n", tool.name, name, tool.failure, e.what()));
    return 1;
  }
}

// No subcommand named: the usage, the version, or an unknown command.
int run_without_command(const Tool& tool, std::span<const Subcommand> subcommands, int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    print_usage(tool, subcommands);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    fmt::print("{} {}\n", tool.name, catalog::version());
    return 0;
  }
  tell(fmt::format("{}: error: unknown command '{}' (see {} --help)\n", tool.name, argv[1], tool.name));
  return 2;
}

}  // namespace

int run_subcommands(const Tool& tool, std::span<const Subcommand> subcommands, int argc, char** argv) {
  const auto found = argc < 2 ? subcommands.end()
                              : std::find_if(subcommands.begin(), subcommands.end(), [&](const Subcommand& c) {
                                  return argv[1] == std::string_view(c.name);
                                });
  int code = 1;
  try {
    code = found != subcommands.end() ? run_command(tool, *found, argc - 1, argv + 1)
                                      : run_without_command(tool, subcommands, argc, argv);
  } catch (const std::exception& e) {  // the usage or the version could not be printed
    tell(fmt::format("{}: error: {}\n", tool.name, e.what()));
    code = 1;
  }
  return with_output_written(tool, found != subcommands.end() ? std::string_view(found->name) : "", code);
}

}  // namespace zb::cli
