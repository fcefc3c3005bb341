// solve_mip: the CBC module (ilp_cbc_module.h) loaded on first use, run in a forked child with a
// hard wall-clock deadline, its outcome brought back through the pipe.
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "sim/support/child_process.h"
#include "sim/support/error.h"
#include "sim/solver/detail/ilp_cbc_module.h"
#include "sim/solver/detail/ilp_model.h"
#include "sim/solver/ilp_solver.h"

namespace zb {

namespace {

// How long past its budget an isolated solve may run before it is killed.
constexpr double kKillGraceSeconds = 0.5;

// Loaded once per process, before any fork: the children inherit it.
const CbcModule& cbc_module() {
  if (!ilp_available()) throw Error("zb-ilp: this build has no COIN-OR CBC (Debian: coinor-libcbc-dev)");
  return reinterpret_cast<const CbcModule&>(load_module("zb-ilp", kCbcModuleFile, kCbcModuleName));
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

bool ilp_available() { return ZB_HAVE_CBC != 0; }

MipOutcome solve_mip(const IlpModel& model, const MipSettings& settings) {
  const CbcModule& cbc = cbc_module();
  MipOutcome outcome;
  std::string error;
  if (!settings.isolate) {
    if (!cbc.solve(model, settings.time_limit_s, settings, outcome, error)) throw Error(fmt::format("CBC: {}", error));
    return outcome;
  }
  // CBC aims at 90% of the budget; the child is killed at the budget plus a short grace.
  const double cbc_budget = 0.9 * settings.time_limit_s;
  // In a forked child with a hard wall-clock deadline: CBC's own limit counts CPU seconds and is
  // not checked everywhere, and CBC can crash when stopped early (docs/design.md section 13).
  const ChildResult run = run_in_child(
      [&](int fd) {
        if (!cbc.solve(model, cbc_budget, settings, outcome, error)) return 3;
        return write_all(fd, encode(outcome)) ? 0 : 3;
      },
      false, settings.time_limit_s + kKillGraceSeconds);
  if (run.succeeded()) {
    if (auto decoded = decode(run.bytes)) return *decoded;
  }
  MipOutcome lost;
  lost.stopped_on_time = run.end == ChildResult::End::timed_out;
  lost.crashed = !lost.stopped_on_time;
  lost.best_bound = -std::numeric_limits<double>::infinity();
  return lost;
}

}  // namespace zb
