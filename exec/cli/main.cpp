// zbexec: entry point, subcommand dispatch and the one place errors become exit codes.
#include "exec/cli/commands.h"
#include "sim/cli/common/subcommands.h"

namespace {

constexpr zb::cli::Subcommand kSubcommands[] = {
    {"run", "run a schedule for real (training steps), optionally verify and predict", zb::exec::cli::run_run},
    {"calibrate", "measure per-stage F/B/W times, t_comm and memory; write a scenario for zbsim",
     zb::exec::cli::run_calibrate},
};

}  // namespace

int main(int argc, char** argv) {
  const zb::cli::Tool tool{"zbexec", "run pipeline-parallel schedules for real (the same schedules zbsim simulates)",
                               "zbexec run --backend cpu --schedule zb-h1 --p 4 --m 8 --layers 8 --hidden 256 --steps 3 --verify",
                               "failure", "0 ok, 2 bad input, 1 failure (including --verify finding a difference)"};
  return zb::cli::run_subcommands(tool, kSubcommands, argc, argv);
}
