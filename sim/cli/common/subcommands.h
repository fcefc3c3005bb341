// The entry point every command-line tool shares: subcommand dispatch, --help, --version, and the
// one place errors become exit codes (0 ok, 2 bad input, 1 internal failure).
#pragma once

#include <span>

namespace zb::cli {

struct Subcommand {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);  // argv[0] is the subcommand's name
};

struct Tool {
  const char* name;         // "zbsim"
  const char* description;  // one line
  const char* example;      // one command line
  const char* failure;      // the word for exit 1: "internal error", "failure"
  const char* exit_codes;   // the help's exit-code line
};

// InputError and Boost.Program_options errors are bad input (exit 2, "tool sub: error: ...");
// any other exception exits 1. Without a subcommand the usage goes to stdout and the exit is 2.
int run_subcommands(const Tool& tool, std::span<const Subcommand> subcommands, int argc, char** argv);

}  // namespace zb::cli
