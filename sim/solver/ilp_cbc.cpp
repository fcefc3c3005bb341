// libzbsim_cbc.so, the CBC backend of zb-ilp (ilp_cbc_module.h): loads the model into Clp/Cbc,
// warm-starts, solves within a wall clock. The only file that includes COIN-OR's headers.
#include <CbcEventHandler.hpp>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/solver/detail/ilp_cbc_module.h"

namespace zb {

namespace {

using Clock = std::chrono::steady_clock;

// CBC's own limit counts CPU seconds and is not checked everywhere; this stops the search at
// every node and solution event once the wall-clock deadline has passed.
class DeadlineHandler : public CbcEventHandler {
 public:
  explicit DeadlineHandler(Clock::time_point deadline) : deadline_(deadline) {}
  DeadlineHandler(const DeadlineHandler&) = default;
  DeadlineHandler& operator=(const DeadlineHandler&) = default;
  ~DeadlineHandler() override = default;

  CbcAction event(CbcEvent which_event) override {
    (void)which_event;
    if (Clock::now() >= deadline_) {
      *stopped_ = true;
      return stop;
    }
    return noAction;
  }
  CbcEventHandler* clone() const override { return new DeadlineHandler(*this); }
  bool stopped() const { return *stopped_; }

 private:
  Clock::time_point deadline_;
  // Shared by the clones CBC makes, so the caller sees whether any of them stopped.
  std::shared_ptr<bool> stopped_ = std::make_shared<bool>(false);
};

MipOutcome solve_in_process(const IlpModel& model, double time_limit_s, const MipSettings& settings) {
  const int threads = settings.threads;
  const std::string& lp_file = settings.lp_file;
  const auto start = Clock::now();
  const LinearProgram& lp = model.lp;
  const int columns = static_cast<int>(lp.columns.size());
  OsiClpSolverInterface solver;
  // Row-major in one piece: appending rows one by one is quadratic in CoinPackedMatrix.
  std::vector<double> elements;
  std::vector<int> indices;
  std::vector<CoinBigIndex> starts;
  std::vector<int> lengths;
  std::vector<double> row_lower, row_upper;
  for (const auto& row : lp.rows) {
    starts.push_back(static_cast<CoinBigIndex>(elements.size()));
    lengths.push_back(static_cast<int>(row.terms.size()));
    for (const auto& [col, coef] : row.terms) {
      indices.push_back(col);
      elements.push_back(coef);
    }
    row_lower.push_back(row.lower);
    row_upper.push_back(row.upper);
  }
  starts.push_back(static_cast<CoinBigIndex>(elements.size()));
  const CoinPackedMatrix matrix(false, columns, static_cast<int>(lp.rows.size()),
                                static_cast<CoinBigIndex>(elements.size()), elements.data(), indices.data(),
                                starts.data(), lengths.data());
  std::vector<double> col_lower, col_upper, objective;
  for (const auto& col : lp.columns) {
    col_lower.push_back(col.lower);
    col_upper.push_back(col.upper);
    objective.push_back(col.objective);
  }
  const double inf = solver.getInfinity();
  for (auto& v : row_lower) v = std::max(v, -inf);
  for (auto& v : row_upper) v = std::min(v, inf);
  solver.loadProblem(matrix, col_lower.data(), col_upper.data(), objective.data(), row_lower.data(),
                     row_upper.data());
  // Names on both rows and columns: CBC crashes at the end of a solve with only column names.
  solver.setIntParam(OsiNameDiscipline, 2);
  for (int c = 0; c < columns; ++c) {
    if (lp.columns[static_cast<std::size_t>(c)].integer) solver.setInteger(c);
    solver.setColName(c, lp.columns[static_cast<std::size_t>(c)].name);
  }
  for (std::size_t r = 0; r < lp.rows.size(); ++r) solver.setRowName(static_cast<int>(r), lp.rows[r].name);
  solver.messageHandler()->setLogLevel(0);
  if (!lp_file.empty()) {
    std::string base = lp_file;
    if (base.size() > 3 && base.substr(base.size() - 3) == ".lp") base.resize(base.size() - 3);
    solver.writeLp(base.c_str(), "lp", 1e-9, 10, 10, 0.0, true);
  }

  CbcModel cbc(solver);
  cbc.setLogLevel(0);
  cbc.messageHandler()->setLogLevel(0);
  std::vector<std::pair<std::string, double>> start_values;
  start_values.reserve(static_cast<std::size_t>(columns));
  for (int c = 0; c < columns; ++c) {
    start_values.emplace_back(lp.columns[static_cast<std::size_t>(c)].name, model.warm_start[static_cast<std::size_t>(c)]);
  }
  if (settings.use_warm_start) cbc.setMIPStart(start_values);
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const double budget = std::max(0.05, time_limit_s - elapsed);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(budget));
  DeadlineHandler handler(deadline);
  cbc.passInEventHandler(&handler);

  CbcSolverUsefulData data;
  CbcMain0(cbc, data);
  const std::string seconds = fmt::format("{:.3f}", budget);
  const std::string thread_count = fmt::format("{}", threads);
  const std::string nodes = fmt::format("{}", std::max<std::int64_t>(1, settings.node_limit));
  std::vector<const char*> argv = {"zbsim", "-log",    "0",           "-slog",     "0",          "-timeMode",
                                   "elapsed", "-sec", seconds.c_str(), "-maxNodes", nodes.c_str()};
  if (threads > 1) {
    argv.push_back("-threads");
    argv.push_back(thread_count.c_str());
  }
  // Spans on a grid: a node whose bound is within one step of the incumbent cannot improve it.
  const std::string step = fmt::format("{:.9g}", settings.objective_step * (1 - 1e-6));
  if (settings.objective_step > 0) {
    argv.push_back("-increment");
    argv.push_back(step.c_str());
  }
  argv.push_back("-solve");
  argv.push_back("-quit");
  CbcMain1(static_cast<int>(argv.size()), argv.data(), cbc, [](CbcModel*, int) { return 0; }, data);

  MipOutcome outcome;
  outcome.proven_optimal = cbc.isProvenOptimal() && !cbc.isSecondsLimitReached();
  outcome.proven_infeasible = cbc.isProvenInfeasible();
  outcome.stopped_on_time = cbc.isSecondsLimitReached() || Clock::now() >= deadline;
  outcome.stopped_on_nodes = cbc.isNodeLimitReached();
  // A stopped search proves nothing: CBC stopped by the deadline inside its root node can report
  // "infeasible" for a model that holds shorter schedules (p=8 m=16 1.5B at 1.25p claimed 876.284
  // optimal, the order search finds 873.418 in it; test_ilp_model.cpp).
  if (outcome.stopped_on_time || outcome.stopped_on_nodes) {
    outcome.proven_optimal = false;
    outcome.proven_infeasible = false;
  }
  outcome.nodes = cbc.getNodeCount();
  outcome.best_bound = cbc.getBestPossibleObjValue();
  const double* best = cbc.bestSolution();
  if (best != nullptr && cbc.getNumCols() == columns) outcome.values.assign(best, best + columns);
  return outcome;
}

bool solve(const IlpModel& model, double time_limit_s, const MipSettings& settings, MipOutcome& outcome,
           std::string& error) {
  try {
    outcome = solve_in_process(model, time_limit_s, settings);
    return true;
  } catch (const std::exception& failure) {
    error = failure.what();
  } catch (...) {
    error = "unknown exception";
  }
  return false;
}

}  // namespace

}  // namespace zb

extern "C" __attribute__((visibility("default"))) const zb::ModuleHeader* zbsim_module() {
  static const zb::CbcModule module{{zb::kCbcModuleName, ZB_MODULE_BUILD_ID}, zb::solve};
  return &module.header;
}
