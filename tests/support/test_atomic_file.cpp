// Writers respect the file system: regular files atomically, symlinks followed, special files
// written through and never replaced, concurrent writers of one path kept apart.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "sim/support/atomic_file.h"
#include "sim/support/error.h"

namespace zb {
namespace {

namespace fs = std::filesystem;

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("zb_atomic_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Only the names given: no temporary left behind.
  void expect_only(std::vector<std::string> names) {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(dir_)) found.push_back(entry.path().filename().string());
    std::sort(found.begin(), found.end());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(found, names);
  }
  fs::path dir_;
};

TEST_F(AtomicFile, RegularFilesAreReplacedWhole) {
  const std::string path = (dir_ / "a.txt").string();
  write_file_atomically(path, "first");
  write_file_atomically(path, "second");
  EXPECT_EQ(read_file(path), "second");
  expect_only({"a.txt"});
}

TEST_F(AtomicFile, ASymlinkIsFollowedAndStaysALink) {
  write_file_atomically((dir_ / "target.txt").string(), "old");
  fs::create_symlink("target.txt", dir_ / "link.txt");
  write_file_atomically((dir_ / "link.txt").string(), "new");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "link.txt")));
  EXPECT_EQ(read_file((dir_ / "target.txt").string()), "new");
  // A dangling link creates the file it points to.
  fs::create_symlink("later.txt", dir_ / "dangling.txt");
  write_file_atomically((dir_ / "dangling.txt").string(), "made");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "dangling.txt")));
  EXPECT_EQ(read_file((dir_ / "later.txt").string()), "made");
  expect_only({"target.txt", "link.txt", "dangling.txt", "later.txt"});
}

// A FIFO stands for /dev/null, /dev/stdout or a pipe (which the old rename replaced by a file).
TEST_F(AtomicFile, ASpecialFileIsWrittenThroughNotReplaced) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read_file(fifo.string()); });
  write_file_atomically(fifo.string(), "through the pipe");
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fs::status(fifo)));
  write_file_atomically("/dev/null", "nothing");
  EXPECT_TRUE(fs::is_character_file(fs::status("/dev/null")));
  expect_only({"pipe"});
}

// /dev/stdout and /dev/fd/N name a descriptor: a pipe is written through (its link's text,
// "pipe:[N]", is no path), and a file the shell opened for `>>` keeps what it held, written at
// the end, not replaced by a new file.
TEST_F(AtomicFile, TheNamesOfADescriptorWriteToIt) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  write_file_atomically("/dev/fd/" + std::to_string(ends[1]), "through the pipe");
  check_writable("/proc/self/fd/" + std::to_string(ends[1]));
  ::close(ends[1]);
  char buffer[64] = {};
  EXPECT_EQ(std::string(buffer, static_cast<std::size_t>(::read(ends[0], buffer, sizeof buffer))), "through the pipe");
  // The read end is no output: refused before anything is written.
  EXPECT_THROW(check_writable("/dev/fd/" + std::to_string(ends[0])), InputError);
  EXPECT_THROW(write_file_atomically("/dev/fd/" + std::to_string(ends[0]), "x"), InputError);
  ::close(ends[0]);
  const fs::path log = dir_ / "log.txt";
  write_file_atomically(log.string(), "kept\n");
  const int appending = ::open(log.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(appending, 0);
  write_file_atomically("/proc/self/fd/" + std::to_string(appending), "added\n");
  ::close(appending);
  EXPECT_EQ(read_file(log.string()), "kept\nadded\n");
  EXPECT_THROW(write_file_atomically("/dev/fd/999999", "x"), InputError);  // not open
  expect_only({"log.txt"});
}

TEST_F(AtomicFile, ConcurrentWritersOfOnePathDoNotShareATemporary) {
  const std::string path = (dir_ / "shared.txt").string();
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t) {
    writers.emplace_back([&, t] {
      for (int k = 0; k < 50; ++k) write_file_atomically(path, std::string(1000, static_cast<char>('a' + t)));
    });
  }
  for (auto& writer : writers) writer.join();
  const std::string content = read_file(path);
  ASSERT_EQ(content.size(), 1000u);
  EXPECT_EQ(content, std::string(1000, content[0]));  // one writer's whole content, never a mix
  expect_only({"shared.txt"});
}

TEST_F(AtomicFile, UnwritablePathsAreInputErrorsAndLeaveNothing) {
  EXPECT_THROW(write_file_atomically(dir_.string(), "x"), InputError);
  EXPECT_THROW(write_file_atomically((dir_ / "missing" / "f.txt").string(), "x"), InputError);
  expect_only({});
}

// A full disk: the write fails as an InputError naming the path and the reason, the file that
// was there keeps its old content and no temporary is left. A 64 KiB tmpfs when the test may
// mount one (root in a container or VM); /dev/full always.
TEST_F(AtomicFile, ADiskFullLeavesTheOldFileAndNoTemporary) {
  try {
    write_file_atomically("/dev/full", std::string(1 << 16, 'x'));
    ADD_FAILURE() << "writing /dev/full succeeded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full: write failed: No space left on device"), std::string::npos)
        << e.what();
  }
  const fs::path mount_point = dir_ / "full";
  fs::create_directories(mount_point);
  if (::mount("tmpfs", mount_point.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "cannot mount a small tmpfs here (" << std::strerror(errno) << "); /dev/full was checked";
  }
  const std::string path = (mount_point / "out.txt").string();
  write_file_atomically(path, "old\n");
  try {
    write_file_atomically(path, std::string(1 << 20, 'x'));  // 1 MiB into 64 KiB
    ADD_FAILURE() << "a write larger than the disk succeeded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_file(path), "old\n");
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(mount_point)) left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"out.txt"});
  ::umount(mount_point.c_str());
}

// Several outputs are renamed only once all are complete; a write that fails leaves every old
// file and no temporary.
TEST_F(AtomicFile, SeveralFilesAreWrittenAllOrNone) {
  const std::string a = (dir_ / "a.txt").string(), b = (dir_ / "b.txt").string();
  write_file_atomically(a, "old a");
  write_file_atomically(b, "old b");
  const FileContent both[] = {{a, "new a"}, {b, "new b"}};
  write_files_atomically(both);
  EXPECT_EQ(read_file(a), "new a");
  EXPECT_EQ(read_file(b), "new b");
  const FileContent second_fails[] = {{a, "newer a"}, {(dir_ / "no-folder" / "c.txt").string(), "c"}};
  EXPECT_THROW(write_files_atomically(second_fails), InputError);
  EXPECT_EQ(read_file(a), "new a");  // the first was not renamed into place
  expect_only({"a.txt", "b.txt"});
}

// SIGTERM while a command holds a complete temporary (here: waiting to write the FIFO it commits
// first, with no reader) removes that temporary, and the process still ends by the signal.
TEST_F(AtomicFile, ASignalDuringAWriteRemovesTheTemporaries) {
  const std::string fifo = (dir_ / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const std::string file = (dir_ / "out.txt").string();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const FileContent files[] = {{fifo, "to the pipe"}, {file, std::string(1 << 20, 'x')}};
    try {
      write_files_atomically(files);  // blocks opening the FIFO, the file's temporary complete
    } catch (const std::exception& e) {
      fprintf(stderr, "child: %s\n", e.what());
    }
    ::_exit(0);
  }
  auto temporaries = [&] {
    int n = 0;
    for (const auto& entry : fs::directory_iterator(dir_)) n += entry.path().filename().string().find(".tmp-zbsim-") != std::string::npos;
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (temporaries() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string listing;
  for (const auto& entry : fs::directory_iterator(dir_)) listing += entry.path().filename().string() + " ";
  ASSERT_EQ(temporaries(), 1) << "the child never staged its file: " << listing;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // its write complete, blocked on the FIFO
  ASSERT_EQ(::kill(child, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  expect_only({"pipe"});
}

}  // namespace
}  // namespace zb
