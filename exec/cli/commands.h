// The zbexec subcommands; each parses its own flags and returns the exit code.
#pragma once

namespace zb::exec::cli {

int run_run(int argc, char** argv);
int run_calibrate(int argc, char** argv);

}  // namespace zb::exec::cli
