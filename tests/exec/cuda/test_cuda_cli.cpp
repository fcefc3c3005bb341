// zbexec's CUDA flags as a user meets them: help, bad input (exit 2), and no GPU (exit 2).
#include <gtest/gtest.h>

#include <string>

#include "exec/cuda/detail/cuda_check.h"

#include "tests/testing/cli_test.h"

namespace {

// The exit code and everything the command printed (stdout and stderr together).
struct Outcome {
  int code = -1;
  std::string output;
};

Outcome zbexec(const std::string& args) {
  const zb::testing::CliRun run = zb::testing::run_merged(ZBEXEC_PATH, args);
  return {run.exit_code, run.out};
}

TEST(ZbexecCuda, HelpListsTheCudaFlags) {
  for (const char* command : {"run", "calibrate"}) {
    const Outcome out = zbexec(std::string(command) + " --help");
    EXPECT_EQ(out.code, 0) << out.output;
    for (const char* flag : {"--devices", "--precision", "--sm-partition"}) {
      EXPECT_NE(out.output.find(flag), std::string::npos) << command << " lacks " << flag;
    }
  }
}

TEST(ZbexecCuda, BadFlagsExitWithTwoBeforeTouchingAGpu) {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c : {Case{"run --backend cuda --p 2 --devices virtual:3", "--p is 2"},
                        Case{"run --backend cuda --p 2 --devices cuda:0,0", "listed twice"},
                        Case{"run --backend cuda --p 2 --devices gpu:1", "--devices 'gpu:1'"},
                        Case{"run --backend cuda --p 2 --precision fp8", "--precision 'fp8'"},
                        Case{"calibrate --backend cuda --p 2 --sm-partition half --out /dev/null",
                             "--sm-partition 'half'"},
                        // a CUDA flag on a CPU run: a forgotten --backend cuda, refused
                        Case{"run --p 2 --precision bf16", "--precision 'bf16': only with --backend cuda"},
                        Case{"calibrate --p 2 --devices cuda:0,1 --out /dev/null", "--devices 'cuda:0,1': only with"}}) {
    const Outcome out = zbexec(c.args);
    EXPECT_EQ(out.code, 2) << c.args << "\n" << out.output;
    EXPECT_NE(out.output.find(c.message), std::string::npos) << c.args << "\n" << out.output;
  }
}

TEST(ZbexecCuda, WithoutAGpuTheCudaBackendIsRefusedWithTheReason) {
  if (zb::exec::cuda::cuda_available()) GTEST_SKIP() << "a GPU is present";
  const Outcome out = zbexec("run --backend cuda --p 2 --steps 1");
  EXPECT_EQ(out.code, 2) << out.output;
  EXPECT_NE(out.output.find("no usable GPU"), std::string::npos) << out.output;
}

}  // namespace
