// SimGrid and CBC live in modules that zbsim loads only when a command uses them
// (sim/support/module_loader.h): zbsim does not link them, starts and runs every other command
// without them, and names the module and the folders searched when one is missing or broken.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/testing/cli_test.h"

namespace {

namespace fs = std::filesystem;
using zb::testing::CliRun;

class Modules : public zb::testing::CliTest {
 protected:
  // zbsim with $ZBSIM_MODULE_DIR set: the only folder it searches.
  CliRun zbsim_with_modules_in(const fs::path& folder, const std::string& args) {
    return run("ZBSIM_MODULE_DIR=" + folder.string() + " " + ZBSIM_PATH, args);
  }
  fs::path empty_folder() {
    const fs::path folder = dir_ / "no-modules";
    fs::create_directories(folder);
    return folder;
  }
};

constexpr const char* kSimulate = "simulate --p 4 --m 8 --tf 1 --tb 1 --tw 1 --tcomm 0.5 --schedule zb-h1 --engine simgrid";
// zb-auto does not meet the lower bound here, and without the order search and the local search
// (either finds an optimum the bound proves) the solve calls CBC.
constexpr const char* kSolve =
    "solve --p 4 --m 12 --tf 18.522 --tb 18.086 --tw 9.337 --tcomm 0.601 --mem-limit 1.5p --time-limit 2 --search-nodes 0 "
    "--local-evals 0";

TEST_F(Modules, ZbsimLinksNeitherSimgridNorCbc) {
  const CliRun ldd = zb::testing::run_merged("ldd", ZBSIM_PATH);
  ASSERT_EQ(ldd.exit_code, 0) << ldd.out;
  for (const char* library : {"libsimgrid", "libns3", "libCbc", "libClp", "libCoinUtils", "libOsi"}) {
    EXPECT_EQ(ldd.out.find(library), std::string::npos) << library << " in\n" << ldd.out;
  }
}

TEST_F(Modules, CommandsThatNeedNoModuleRunWithoutThem) {
  const fs::path none = empty_folder();
  EXPECT_EQ(zbsim_with_modules_in(none, "--help").exit_code, 0);
  const CliRun exported = zbsim_with_modules_in(none, "export --schedule zb-auto --p 8 --m 32 --mem-limit 1p --to text");
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_NE(exported.out.find("d0: F0"), std::string::npos) << exported.out;
  const CliRun compared = zbsim_with_modules_in(none, "compare --p 4 --m 8 --tf 1 --tb 1 --tw 1 --schedules zb-h1,zb-ilp");
  EXPECT_EQ(compared.exit_code, 0) << compared.err;  // zb-auto meets the bound: no CBC needed
}

TEST_F(Modules, AMissingSimgridModuleIsAnErrorNamingItAndTheFolder) {
  const fs::path none = empty_folder();
  const CliRun run = zbsim_with_modules_in(none, kSimulate);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("SimGrid engine: its module libzbsim_simgrid.so is missing"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(none.string()), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
}

TEST_F(Modules, AMissingCbcModuleIsAnErrorNamingIt) {
  const CliRun run = zbsim_with_modules_in(empty_folder(), kSolve);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("zb-ilp: its module libzbsim_cbc.so is missing"), std::string::npos) << run.err;
}

TEST_F(Modules, AFileThatIsNoModuleIsAnErrorWithTheLoadersReason) {
  const fs::path folder = dir_ / "broken";
  fs::create_directories(folder);
  std::ofstream(folder / "libzbsim_simgrid.so") << "not an ELF file\n";
  const CliRun run = zbsim_with_modules_in(folder, kSimulate);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("SimGrid engine: cannot load its module " + (folder / "libzbsim_simgrid.so").string()),
            std::string::npos)
      << run.err;
}

// The modules need not sit in the build tree: a copy elsewhere, named by $ZBSIM_MODULE_DIR, is
// what is loaded, with the same results as the build's own.
TEST_F(Modules, ModulesAreFoundWhereZbsimModuleDirSays) {
  const fs::path folder = dir_ / "copied";
  fs::create_directories(folder);
  for (const char* file : {"libzbsim_simgrid.so", "libzbsim_cbc.so"}) {
    fs::copy_file(fs::path(ZB_MODULE_BUILD_DIR) / file, folder / file);
  }
  const CliRun copied = zbsim_with_modules_in(folder, std::string(kSimulate) + " --format json");
  const CliRun built = run(ZBSIM_PATH, std::string(kSimulate) + " --format json");
  ASSERT_EQ(copied.exit_code, 0) << copied.err;
  EXPECT_EQ(copied.out, built.out);
  const CliRun solved = zbsim_with_modules_in(folder, kSolve + std::string(" --format json"));
  EXPECT_EQ(solved.exit_code, 0) << solved.err;
}

}  // namespace
