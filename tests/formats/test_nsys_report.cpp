// Nsight Systems SQLite exports: two real files of two schema versions (tests/data/nsys), read as
// they are, and a copy of one whose NVTX ranges are relabelled as PyTorch's pipeline actions.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/app/catalog/trace_files.h"
#include "sim/formats/nsys_report.h"
#include "tests/testing/input_error.h"

namespace zb {
namespace {

namespace fs = std::filesystem;

const std::string kData = std::string(ZB_SOURCE_DIR) + "/tests/data/nsys/";
const std::string kSaxpy = kData + "saxpy-mpi-cuda-rank0.sqlite";
const std::string kCloverleaf = kData + "cloverleaf-cuda.sqlite";

// A scratch copy of a fixture, with SQL run on it (the fixtures themselves are never written).
class NsysCopy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("zb_nsys_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string copy_with(const std::string& fixture, const std::string& sql) {
    const fs::path path = dir_ / fs::path(fixture).filename();
    fs::copy_file(fixture, path, fs::copy_options::overwrite_existing);
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
    return path.string();
  }

  fs::path dir_;
};

TEST(NsysReport, TwoSchemaVersionsAreReadAsNsysWroteThem) {
  const NsysReport saxpy = read_nsys_report(kSaxpy);
  EXPECT_EQ(saxpy.schema_version, "2.9.1");
  EXPECT_EQ(saxpy.nsys_version, "2022.2.1.31");
  // 22 push/pop ranges (a domain name and a mark share the table and are not ranges): the
  // MPI calls' names are registered strings (textId), saxpy's are inline.
  ASSERT_EQ(saxpy.ranges.size(), 22u);
  EXPECT_EQ(std::count_if(saxpy.ranges.begin(), saxpy.ranges.end(), [](const NsysRange& r) { return r.text == "MPI_Send"; }),
            10);
  EXPECT_EQ(std::count_if(saxpy.ranges.begin(), saxpy.ranges.end(), [](const NsysRange& r) { return r.text == "saxpy"; }),
            5);
  EXPECT_TRUE(std::is_sorted(saxpy.ranges.begin(), saxpy.ranges.end(),
                             [](const NsysRange& a, const NsysRange& b) { return a.start_ns < b.start_ns; }));
  ASSERT_EQ(saxpy.kernels.size(), 5u);
  EXPECT_EQ(saxpy.kernels[0].name, "saxpy");
  EXPECT_EQ(saxpy.kernels[0].start_ns, 924922186);
  EXPECT_EQ(saxpy.kernels[0].end_ns, 942626994);
  EXPECT_EQ(saxpy.kernels[0].device, 0);
  EXPECT_EQ(saxpy.kernels[0].stream, 7);
  // The range and the kernel belong to one process.
  EXPECT_EQ(saxpy.kernels[0].pid, saxpy.ranges[0].pid);

  const NsysReport cloverleaf = read_nsys_report(kCloverleaf);
  EXPECT_EQ(cloverleaf.schema_version, "3.13.2");
  EXPECT_TRUE(cloverleaf.ranges.empty());  // no NVTX_EVENTS table in this run
  EXPECT_EQ(cloverleaf.kernels.size(), 1312u);
}

TEST(NsysReport, AReportWithoutPipelineLabelsSaysWhatItHolds) {
  const std::string message = testing::error_of([] { nsys_profiled_ranks(read_nsys_report(kSaxpy)); });
  EXPECT_NE(message.find(kSaxpy + ": no NVTX range labelled \"PP:\" (22 ranges, 5 kernels)"), std::string::npos)
      << message;
}

TEST_F(NsysCopy, PipelineLabelsBecomeActionsTimedByTheKernelsTheyLaunched) {
  // The five "saxpy" ranges (each launches one kernel) relabelled as stage 0's actions.
  const std::string path = copy_with(kSaxpy, R"(
      UPDATE NVTX_EVENTS SET text = CASE start
        WHEN 924881857 THEN 'PP:0F0' WHEN 1196019772 THEN 'PP:0F1' WHEN 1449139403 THEN 'PP:0I0'
        WHEN 1696238391 THEN 'PP:0W0' WHEN 1947745106 THEN 'PP:0B1' END
      WHERE text = 'saxpy';)");
  const std::vector<ProfiledRank> ranks = nsys_profiled_ranks(read_nsys_report(path));
  ASSERT_EQ(ranks.size(), 1u);
  ASSERT_EQ(ranks[0].actions.size(), 5u);
  EXPECT_EQ(ranks[0].rank, 0);
  const ProfiledAction& f0 = ranks[0].actions[0];
  EXPECT_EQ(f0.label, "0F0");
  // The kernel's time, not the range's (924881857..924940911 on the host).
  EXPECT_EQ(f0.start_ns, 924922186);
  EXPECT_EQ(f0.end_ns, 942626994);

  const Trace trace = catalog::read_trace_files({path});
  EXPECT_EQ(trace.meta.engine, "nsys");
  ASSERT_EQ(trace.devices, 1);
  ASSERT_EQ(trace.spans.size(), 5u);
  EXPECT_EQ(trace.spans[0].pass, Pass::F);
  EXPECT_DOUBLE_EQ(trace.spans[0].start, 0.0);
  EXPECT_NEAR(trace.spans[0].end, (942626994 - 924922186) / 1e6, 1e-9);
  EXPECT_EQ(trace.spans[2].pass, Pass::B);   // PP:0I0: the input gradient
  EXPECT_EQ(trace.spans[3].pass, Pass::W);
  EXPECT_EQ(trace.spans[4].pass, Pass::BW);  // PP:0B1 without a W: the full backward
}

TEST_F(NsysCopy, ARangeThatLaunchedNoKernelKeepsItsOwnTime) {
  const std::string path = copy_with(kSaxpy, "UPDATE NVTX_EVENTS SET text = 'PP:0F0' WHERE start = 2082593236;");
  const std::vector<ProfiledRank> ranks = nsys_profiled_ranks(read_nsys_report(path));
  ASSERT_EQ(ranks.at(0).actions.size(), 1u);
  EXPECT_EQ(ranks[0].actions[0].start_ns, 2082593236);
  EXPECT_EQ(ranks[0].actions[0].end_ns, 2088944716);
}

TEST_F(NsysCopy, AViewInPlaceOfATableAndAFileNotFromNsysAreRefused) {
  // A file's own SQL never runs: a view standing for NVTX_EVENTS is refused, not read.
  const std::string view = copy_with(
      kSaxpy, "ALTER TABLE NVTX_EVENTS RENAME TO NVTX_REAL; CREATE VIEW NVTX_EVENTS AS SELECT * FROM NVTX_REAL;");
  EXPECT_NE(testing::error_of([&] { read_nsys_report(view); }).find("'NVTX_EVENTS' is a view, not a table"),
            std::string::npos);
  const std::string bare = copy_with(kSaxpy, "DROP TABLE EXPORT_META_DATA;");
  EXPECT_NE(testing::error_of([&] { read_nsys_report(bare); }).find("not written by nsys export --type sqlite"),
            std::string::npos);
  // An SQLite header over garbage.
  const fs::path broken = dir_ / "broken.sqlite";
  std::ofstream(broken) << std::string("SQLite format 3\0", 16) << std::string(4096, 'x');
  const std::string message = testing::error_of([&] { catalog::read_trace_files({broken.string()}); });
  EXPECT_NE(message.find(broken.string() + ": "), std::string::npos) << message;
}

}  // namespace
}  // namespace zb
