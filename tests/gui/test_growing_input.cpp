// zbview given a file that is still being written (issue 18, faults): a trace a run is writing
// while the viewer opens it, and an input that never ends. Either the whole file loads or the
// error names the file; nothing crashes, hangs or grows without bound.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "gui/viewer_core/input_files.h"
#include "sim/support/error.h"
#include "sim/formats/trace_json.h"
#include "tests/gui/gui_test_support.h"

namespace zb::view {
namespace {

std::filesystem::path scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("zbview_growing_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

std::string trace_text() {
  return to_json(testing::evaluated("zb-h1", testing::uniform_spec(4, 8))).dump(1);
}

// What a reader sees while a writer is part-way: every prefix of the file. Each one is refused
// naming the file (a trace is one JSON object: no prefix of it is complete).
TEST(GrowingInput, EveryPartlyWrittenTraceIsRefusedNamingTheFile) {
  const std::string text = trace_text();
  const std::size_t step = std::max<std::size_t>(1, text.size() / 97);
  for (std::size_t cut = 0; cut < text.size(); cut += step) {
    try {
      parse_input_text(std::string_view(text).substr(0, cut), "runs/growing.json");
      ADD_FAILURE() << "a prefix of " << cut << " of " << text.size() << " bytes loaded";
    } catch (const InputError& error) {
      EXPECT_NE(std::string(error.what()).find("runs/growing.json"), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(parse_input_text(text, "runs/growing.json").trace->spans.size(), 8u * 4u * 3u);
}

// A writer appending the trace in small pieces while the viewer loads it again and again: each
// load is either the whole trace or an InputError naming the file.
TEST(GrowingInput, ATraceBeingWrittenLoadsWholeOrIsRefusedNamingTheFile) {
  const std::string text = trace_text();
  const auto path = scratch("live.json");
  int refused = 0;
  for (int round = 0; round < 3; ++round) {
    std::filesystem::remove(path);
    { std::ofstream touch(path); }
    std::atomic<bool> done{false};
    std::thread writer([&] {
      std::ofstream out(path, std::ios::binary | std::ios::app);
      for (std::size_t at = 0; at < text.size(); at += 512) {
        out << text.substr(at, 512) << std::flush;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      done = true;
    });
    while (!done) {
      try {
        const LoadedInput input = load_input_file(path.string());
        EXPECT_EQ(input.trace->spans.size(), 96u);
      } catch (const InputError& error) {
        ++refused;
        EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos) << error.what();
      }
    }
    writer.join();
    EXPECT_EQ(load_input_file(path.string()).trace->spans.size(), 96u);  // once written, it loads
  }
  EXPECT_GT(refused, 0) << "no load overlapped the writer: the test did not test";
  std::filesystem::remove_all(path.parent_path());
}

// An input that never ends (a FIFO fed forever): refused at the input size limit, naming the file.
TEST(GrowingInput, AnEndlessInputStopsAtTheSizeLimit) {
  std::signal(SIGPIPE, SIG_IGN);  // the writer sees EPIPE once the reader gives up
  const auto path = scratch("endless.json");
  std::filesystem::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&] {
    const int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) return;
    const std::string block(1 << 16, ' ');
    while (::write(fd, block.data(), block.size()) > 0) {
    }
    ::close(fd);
  });
  std::string message;
  try {
    load_input_file(path.string());
  } catch (const InputError& error) {
    message = error.what();
  }
  writer.join();
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("input size limit"), std::string::npos) << message;
  std::filesystem::remove_all(path.parent_path());
}

}  // namespace
}  // namespace zb::view
