// read_file_kept: one read per file and process, a new read when the file changed.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sim/support/error.h"
#include "sim/support/kept_file.h"

namespace fs = std::filesystem;

namespace {

fs::path fresh_file(const std::string& name, const std::string& text) {
  const fs::path path = fs::temp_directory_path() / (name + "." + std::to_string(::getpid()));
  std::ofstream(path) << text;
  return path;
}

void overwrite_keeping_time(const fs::path& path, const std::string& text) {
  const fs::file_time_type written = fs::last_write_time(path);
  std::ofstream(path) << text;
  fs::last_write_time(path, written);
}

}  // namespace

TEST(KeptFile, ASecondReadComesFromMemoryWhileSizeAndTimeAreUnchanged) {
  const fs::path path = fresh_file("kept-same", "{\"a\": 1}");
  EXPECT_EQ(zb::read_file_kept(path.string()), "{\"a\": 1}");
  // Same size, same modification time: not looked at again (the old text proves no second read).
  overwrite_keeping_time(path, "{\"a\": 2}");
  EXPECT_EQ(zb::read_file_kept(path.string()), "{\"a\": 1}");
  fs::remove(path);
}

TEST(KeptFile, AnEditedFileIsReadAgain) {
  const fs::path path = fresh_file("kept-edited", "{\"a\": 1}");
  EXPECT_EQ(zb::read_file_kept(path.string()), "{\"a\": 1}");
  overwrite_keeping_time(path, "{\"a\": 100}");  // another size
  EXPECT_EQ(zb::read_file_kept(path.string()), "{\"a\": 100}");
  std::ofstream(path) << "{\"a\": 200}";  // same size, a new time
  fs::last_write_time(path, fs::last_write_time(path) + std::chrono::seconds(5));
  EXPECT_EQ(zb::read_file_kept(path.string()), "{\"a\": 200}");
  fs::remove(path);
}

TEST(KeptFile, AMissingFileIsReadFileError) {
  const fs::path path = fs::temp_directory_path() / "kept-missing-file-that-is-not-there";
  EXPECT_THROW((void)zb::read_file_kept(path.string()), zb::InputError);
}
