// The one fork-and-pipe-back runner: bytes, exit codes, signals, deadlines, inherited descriptors.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "sim/support/child_process.h"

namespace zb {
namespace {

TEST(ChildProcess, BringsBackMoreBytesThanAPipeHolds) {
  const std::string big(3'000'000, 'z');
  const ChildResult result = run_in_child([&](int fd) { return write_all(fd, big) ? 0 : 1; }, true);
  EXPECT_TRUE(result.succeeded()) << result.describe();
  EXPECT_EQ(result.bytes, big);
}

TEST(ChildProcess, ExitCodesAndSignalsAreTold) {
  const ChildResult exited = run_in_child([](int) { return 3; }, true);
  EXPECT_EQ(exited.end, ChildResult::End::exited);
  EXPECT_EQ(exited.exit_code, 3);
  EXPECT_EQ(exited.describe(), "exited with status 3");
  const ChildResult killed = run_in_child([](int) -> int { std::abort(); }, true);
  EXPECT_EQ(killed.end, ChildResult::End::signalled);
  EXPECT_EQ(killed.signal, SIGABRT);
  const ChildResult thrown = run_in_child([](int) -> int { throw 42; }, true);
  EXPECT_EQ(thrown.exit_code, 70);
}

TEST(ChildProcess, AChildPastItsDeadlineIsKilled) {
  const auto start = std::chrono::steady_clock::now();
  const ChildResult result = run_in_child(
      [](int fd) {
        write_all(fd, "partial");
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return 0;
      },
      true, 0.3);
  EXPECT_EQ(result.end, ChildResult::End::timed_out);
  EXPECT_TRUE(result.bytes.empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

// A descriptor the parent holds (another thread's pipe in a parallel sweep) must not stay open
// in the child, or that pipe's reader would wait for this child too.
TEST(ChildProcess, TheChildKeepsNoInheritedDescriptorButItsPipe) {
  int other[2];
  ASSERT_EQ(::pipe(other), 0);
  const ChildResult result = run_in_child(
      [&](int fd) {
        const bool read_open = ::fcntl(other[0], F_GETFD) != -1;
        const bool write_open = ::fcntl(other[1], F_GETFD) != -1;
        return write_all(fd, std::string(read_open ? "r" : "-") + (write_open ? "w" : "-")) ? 0 : 1;
      },
      true);
  ::close(other[0]);
  ::close(other[1]);
  ASSERT_TRUE(result.succeeded()) << result.describe();
  EXPECT_EQ(result.bytes, "--");
}

}  // namespace
}  // namespace zb
