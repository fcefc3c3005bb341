// The README's figures are what zbsim prints: the demo's table and the SimGrid table are run here
// and compared, so a change of numbers cannot go unnoticed (update the README with them).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "tests/testing/cli_test.h"

namespace {

using zb::testing::CliRun;
using zb::testing::slurp;

class Readme : public zb::testing::CliTest {
 protected:
  CliRun zbsim(const std::string& args) { return run(ZBSIM_PATH, args); }
  std::string readme() const { return slurp(std::string(ZB_SOURCE_DIR) + "/README.md"); }
};

// The block after "$ scripts/demo" up to its closing fence.
std::string demo_block(const std::string& readme) {
  const auto start = readme.find("$ scripts/demo\n");
  if (start == std::string::npos) return {};
  const auto body = start + std::string("$ scripts/demo\n").size();
  return readme.substr(body, readme.find("```", body) - body);
}

TEST_F(Readme, TheDemoTableIsWhatTheDemoPrints) {
  const std::string demo = slurp(std::string(ZB_SOURCE_DIR) + "/scripts/demo");
  const std::string args = "--p 8 --m 24 --tf 18.522 --tb 18.086 --tw 9.337 --tcomm 0.601 \\\n  --mem-limit 2p";
  ASSERT_NE(demo.find("compare " + args), std::string::npos) << "scripts/demo no longer runs the README's command";
  const CliRun run = zbsim("compare --p 8 --m 24 --tf 18.522 --tb 18.086 --tw 9.337 --tcomm 0.601 --mem-limit 2p");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(demo_block(readme()), run.out);
}

// "| zb-h1 | 221.36 | 248.71 | 257.49 |" rows of the table after "| makespan (ms) |".
std::map<std::string, std::vector<std::string>> simgrid_table(const std::string& readme) {
  std::map<std::string, std::vector<std::string>> rows;
  std::istringstream in(readme.substr(readme.find("| makespan (ms) |")));
  std::string line;
  std::getline(in, line);
  std::getline(in, line);  // |---|
  while (std::getline(in, line) && line.starts_with("| ")) {
    std::vector<std::string> cells;
    std::stringstream cells_in(line.substr(1));
    std::string cell;
    while (std::getline(cells_in, cell, '|')) {
      cell.erase(0, cell.find_first_not_of(' '));
      cell.erase(cell.find_last_not_of(' ') + 1);
      if (!cell.empty()) cells.push_back(cell);
    }
    rows[cells.front()] = {cells.begin() + 1, cells.end()};
  }
  return rows;
}

TEST_F(Readme, TheSimgridTableIsWhatTheEnginesGive) {
  const std::string text = readme();
  const std::string problem = "--p 32 --m 64 --tf 1 --tb 1 --tw 0.8 --tcomm 0.04 --bytes-act 16.8e6";
  ASSERT_NE(text.find("P=\"" + problem + "\""), std::string::npos) << "the README's SimGrid example changed its problem";
  const auto rows = simgrid_table(text);
  ASSERT_EQ(rows.size(), 4u);
  const std::string clusters = std::string(ZB_SOURCE_DIR) + "/models/clusters/";
  const std::vector<std::string> engines = {"", "--engine simgrid --cluster " + clusters + "4x8-ib200.json",
                                            "--engine simgrid --cluster " + clusters + "4x8-ib200-1nic.json"};
  for (const auto& [label, cells] : rows) {
    const std::string schedule = label.substr(0, label.find(' '));
    const std::string chunks = label.find("chunks 2") != std::string::npos ? " --chunks 2" : "";
    ASSERT_EQ(cells.size(), engines.size()) << label;
    for (std::size_t k = 0; k < engines.size(); ++k) {
      const CliRun run =
          zbsim("simulate " + problem + chunks + " --schedule " + schedule + " " + engines[k] + " --format json");
      ASSERT_EQ(run.exit_code, 0) << label << " " << engines[k] << ": " << run.err;
      const double makespan = nlohmann::json::parse(run.out)["results"][0]["makespan"].get<double>();
      EXPECT_EQ(fmt::format("{:.2f}", makespan), cells[k]) << label << " on " << (k ? engines[k] : "eval");
    }
  }
}

}  // namespace
