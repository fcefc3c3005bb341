// The subcommands of zbsim: each parses its own arguments (argv[0] is the subcommand name).
#pragma once

namespace zb::cli {

int run_compare(int argc, char** argv);
int run_compare_trace(int argc, char** argv);
int run_simulate(int argc, char** argv);
int run_export(int argc, char** argv);
int run_solve(int argc, char** argv);     // with zb_solver
int run_frontier(int argc, char** argv);  // with zb_solver
int run_sweep(int argc, char** argv);
int run_plot(int argc, char** argv);
int run_partition(int argc, char** argv);
int run_recommend(int argc, char** argv);
int run_validate(int argc, char** argv);   // with zb_validate
int run_calibrate_model(int argc, char** argv);

}  // namespace zb::cli
