// The CBC backend of zb-ilp: loads the model into Clp/Cbc, warm-starts, solves within a wall clock.
#include <CbcEventHandler.hpp>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "sim/schedule/child_process.h"
#include "sim/schedule/error.h"
#include "sim/solver/ilp_model.h"
#include "sim/solver/ilp_solver.h"

namespace zb {

namespace {

using Clock = std::chrono::steady_clock;

// How long past its budget an isolated solve may run before it is killed.
constexpr double kKillGraceSeconds = 0.5;

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
  if (outcome.stopped_on_time || outcome.stopped_on_nodes) outcome.proven_optimal = false;
  outcome.nodes = cbc.getNodeCount();
  outcome.best_bound = cbc.getBestPossibleObjValue();
  const double* best = cbc.bestSolution();
  if (best != nullptr && cbc.getNumCols() == columns) outcome.values.assign(best, best + columns);
  return outcome;
}

// The outcome as bytes for the trip through the pipe (same machine, same binary).
std::string encode(const MipOutcome& outcome) {
  const std::uint32_t flags = (outcome.proven_optimal ? 1u : 0u) | (outcome.proven_infeasible ? 2u : 0u) |
                              (outcome.stopped_on_time ? 4u : 0u) | (outcome.stopped_on_nodes ? 8u : 0u);
  const std::uint64_t count = outcome.values.size();
  std::string bytes(sizeof flags + sizeof(double) + sizeof outcome.nodes + sizeof count + count * sizeof(double), '\0');
  char* at = bytes.data();
  std::memcpy(at, &flags, sizeof flags);
  at += sizeof flags;
  std::memcpy(at, &outcome.best_bound, sizeof(double));
  at += sizeof(double);
  std::memcpy(at, &outcome.nodes, sizeof outcome.nodes);
  at += sizeof outcome.nodes;
  std::memcpy(at, &count, sizeof count);
  at += sizeof count;
  if (count > 0) std::memcpy(at, outcome.values.data(), count * sizeof(double));
  return bytes;
}

std::optional<MipOutcome> decode(const std::string& bytes) {
  MipOutcome outcome;
  std::uint32_t flags = 0;
  std::uint64_t count = 0;
  const std::size_t header = sizeof flags + sizeof(double) + sizeof outcome.nodes + sizeof count;
  if (bytes.size() < header) return std::nullopt;
  const char* at = bytes.data();
  std::memcpy(&flags, at, sizeof flags);
  at += sizeof flags;
  std::memcpy(&outcome.best_bound, at, sizeof(double));
  at += sizeof(double);
  std::memcpy(&outcome.nodes, at, sizeof outcome.nodes);
  at += sizeof outcome.nodes;
  std::memcpy(&count, at, sizeof count);
  at += sizeof count;
  if (bytes.size() != header + count * sizeof(double)) return std::nullopt;
  outcome.values.resize(count);
  if (count > 0) std::memcpy(outcome.values.data(), at, count * sizeof(double));
  outcome.proven_optimal = (flags & 1u) != 0;
  outcome.proven_infeasible = (flags & 2u) != 0;
  outcome.stopped_on_time = (flags & 4u) != 0;
  outcome.stopped_on_nodes = (flags & 8u) != 0;
  return outcome;
}

}  // namespace

bool ilp_available() { return true; }

MipOutcome solve_mip(const IlpModel& model, const MipSettings& settings) {
  if (!settings.isolate) return solve_in_process(model, settings.time_limit_s, settings);
  // CBC aims at 90% of the budget; the child is killed at the budget plus a short grace.
  const double cbc_budget = 0.9 * settings.time_limit_s;
  // In a forked child with a hard wall-clock deadline: CBC's own limit counts CPU seconds and is
  // not checked everywhere, and CBC can crash when stopped early (docs/design.md section 13).
  const ChildResult run = run_in_child(
      [&](int fd) { return write_all(fd, encode(solve_in_process(model, cbc_budget, settings))) ? 0 : 3; }, false,
      settings.time_limit_s + kKillGraceSeconds);
  if (run.succeeded()) {
    if (auto outcome = decode(run.bytes)) return *outcome;
  }
  MipOutcome lost;
  lost.stopped_on_time = run.end == ChildResult::End::timed_out;
  lost.crashed = !lost.stopped_on_time;
  lost.best_bound = -std::numeric_limits<double>::infinity();
  return lost;
}

}  // namespace zb
