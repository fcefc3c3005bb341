// Schedule validation: completeness, per-stage order, a deadlock dry run, memory against the limit.
#include "sim/core/validator.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "sim/core/detail/channel_order.h"
#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/memory.h"

namespace zb {

namespace {

constexpr std::size_t kMaxErrors = 20;
// Above this many (stage, microbatch) cells a schedule too short to fill them is refused up front.
constexpr std::size_t kMaxDenseCells = std::size_t{1} << 20;
constexpr int kAbsent = -1;

// Where each pass of one (stage, microbatch) sits on its device, and how often it occurs.
struct Occurrence {
  int step[kPassCount] = {kAbsent, kAbsent, kAbsent, kAbsent, kAbsent, kAbsent};
  int count[kPassCount] = {};
};

int index_of(Pass pass) { return static_cast<int>(pass); }

// The rule of overlapped pairs (Action::overlap_next): a forward, then a backward (B or BW) of
// another (chunk, microbatch), and no third action chained on. What the second part needs is
// then never the first part's output, so the block can start with both inputs ready.
std::optional<std::string> pair_error(const std::vector<Action>& actions, std::size_t step) {
  const Action& first = actions[step];
  if (step + 1 == actions.size()) {
    return fmt::format("{} is marked as overlapped with the next action, but it is the device's last", to_token(first));
  }
  const Action& second = actions[step + 1];
  const std::string pair = fmt::format("({};{})", to_token(first), to_token(second));
  if (second.overlap_next) return fmt::format("overlapped pair {} is chained to the action after it", pair);
  if (first.pass != Pass::F || (second.pass != Pass::B && second.pass != Pass::BW)) {
    return fmt::format("overlapped pair {}: expected a forward then a backward (F then B or BW)", pair);
  }
  if (first.chunk == second.chunk && first.microbatch == second.microbatch) {
    return fmt::format("overlapped pair {}: the backward needs the forward it is paired with", pair);
  }
  return std::nullopt;
}

// The report's errors as they are found: every one counted, messages made only while the report
// has room (a file missing millions of actions must not format millions of messages).
class ErrorList {
 public:
  explicit ErrorList(std::vector<std::string>& errors) : errors_(errors) {}

  template <typename Message>
  void add(Message&& message) {
    ++total_;
    if (errors_.size() < kMaxErrors) errors_.push_back(message());
  }

  // The line that says how many were counted but not kept.
  void close() {
    if (total_ > errors_.size()) errors_.push_back(fmt::format("... and {} more errors", total_ - errors_.size()));
  }

 private:
  std::vector<std::string>& errors_;
  std::size_t total_ = 0;
};

// A schedule made for another shape (devices, placement, chunks), or one far too short to fill
// a large table of (stage, microbatch) cells (one stray "F999999999" makes m 10^9): the one error
// that says so, checked before anything is counted.
std::optional<std::string> shape_error(const Problem& problem, const Schedule& schedule) {
  if (schedule.device_count() != problem.devices) {
    return fmt::format("schedule has {} devices but the problem has p={}", schedule.device_count(), problem.devices);
  }
  if (schedule.placement && *schedule.placement != problem.placement) {
    return fmt::format("schedule '{}' was made for placement {} but the problem has placement {}", schedule.name,
                       placement_name(*schedule.placement), placement_name(problem.placement));
  }
  if (schedule.chunks && *schedule.chunks != problem.chunks) {
    return fmt::format("schedule '{}' was made for chunks={} but the problem has chunks={}", schedule.name,
                       *schedule.chunks, problem.chunks);
  }
  // Every (stage, microbatch) on the microbatch's path needs an F and a backward; a path crosses
  // every stage, or one copy's under the bidirectional placement (DualPipe).
  const int m = problem.microbatches;
  const std::size_t cells = static_cast<std::size_t>(problem.stages()) * static_cast<std::size_t>(m);
  const std::size_t on_paths = static_cast<std::size_t>(problem.devices) *
                               static_cast<std::size_t>(chunks_per_path(problem.placement, problem.chunks)) *
                               static_cast<std::size_t>(m);
  if (cells > kMaxDenseCells && schedule.action_count() < 2 * on_paths) {
    return fmt::format(
        "schedule '{}' has {} actions, but p={} chunks={} m={} needs at least {} (an F and a "
        "backward per stage and microbatch)",
        schedule.name, schedule.action_count(), problem.devices, problem.chunks, m, 2 * on_paths);
  }
  return std::nullopt;
}

// Where each pass of every (stage, microbatch) sits, indexed stage * m + microbatch; actions
// outside the problem, off their microbatch's path or in a broken overlapped pair are errors.
std::vector<Occurrence> find_occurrences(const Problem& problem, const Schedule& schedule, ErrorList& errors) {
  const int m = problem.microbatches;
  std::vector<Occurrence> seen(static_cast<std::size_t>(problem.stages()) * static_cast<std::size_t>(m));
  for (int d = 0; d < problem.devices; ++d) {
    const auto& actions = schedule.devices[d];
    for (std::size_t step = 0; step < actions.size(); ++step) {
      const Action& action = actions[step];
      if (action.chunk < 0 || action.chunk >= problem.chunks || action.microbatch < 0 || action.microbatch >= m) {
        errors.add([&] {
          return fmt::format("d{} step {}: {} is outside the problem (m={}, chunks={})", d, step, to_token(action), m,
                             problem.chunks);
        });
        continue;
      }
      if (action.overlap_next) {
        if (auto error = pair_error(actions, step)) {
          errors.add([&] { return fmt::format("d{} step {}: {}", d, step, *error); });
        }
      }
      const int stage = problem.stage_of(d, action.chunk);
      if (const StagePath path = problem.path(action.microbatch); !path.contains(stage)) {
        errors.add([&] {
          return fmt::format("d{} step {}: {} is on stage {}, but microbatch {} runs stages {}..{} (placement {})", d,
                             step, to_token(action), stage, action.microbatch, path.first, path.last,
                             placement_name(problem.placement));
        });
        continue;
      }
      Occurrence& occurrence = seen[static_cast<std::size_t>(stage) * m + action.microbatch];
      const int k = index_of(action.pass);
      if (occurrence.count[k]++ == 0) occurrence.step[k] = static_cast<int>(step);
    }
  }
  return seen;
}

// An offload (O) and its reload (L): both or neither, the offload after its F, the reload after
// its offload and before the backward that needs what it brings back; and a problem that says how
// long a copy takes.
void check_copies(const Occurrence& o, int stage, int mb, const Problem& problem, Pass backward, ErrorList& errors) {
  const auto count = [&](Pass pass) { return o.count[index_of(pass)]; };
  const auto step = [&](Pass pass) { return o.step[index_of(pass)]; };
  if (count(Pass::O) == 0 && count(Pass::L) == 0) return;
  const int d = problem.device_of_stage(stage);
  const int chunk = problem.chunk_of_stage(stage);
  const auto token = [&](Pass pass) { return to_token({pass, mb, chunk}); };
  if (problem.t_offload.empty()) {
    errors.add([&] {
      return fmt::format("d{}: {} (stage {}): the problem gives no copy time for offloads and reloads (t_offload)", d,
                         token(count(Pass::O) > 0 ? Pass::O : Pass::L), stage);
    });
  }
  if (count(Pass::L) == 0) {
    errors.add([&] { return fmt::format("d{}: {} is offloaded but never reloaded (no {})", d, token(Pass::O), token(Pass::L)); });
    return;
  }
  if (count(Pass::O) == 0) {
    errors.add([&] { return fmt::format("d{}: {} reloads what was never offloaded (no {})", d, token(Pass::L), token(Pass::O)); });
    return;
  }
  const auto order = [&](Pass first, Pass second, const char* why) {
    if (step(first) == kAbsent || step(second) == kAbsent || step(second) > step(first)) return;
    errors.add([&] {
      return fmt::format("d{}: {} at step {} must come after {} at step {} ({})", d, token(second), step(second),
                         token(first), step(first), why);
    });
  };
  order(Pass::F, Pass::O, "it copies what the forward left");
  order(Pass::O, Pass::L, "it brings back what the offload copied");
  order(Pass::L, backward, "the backward needs what the reload brings back");
}

// One (stage, microbatch)'s passes: each at most once, an F, one backward (B and W, or BW), and
// the backward after its F, the W after its B.
void check_passes(const Occurrence& o, int stage, int mb, const Problem& problem, ErrorList& errors) {
  const int d = problem.device_of_stage(stage);
  const int chunk = problem.chunk_of_stage(stage);
  const auto where = [&](Pass pass) {
    return fmt::format("d{}: {} (stage {})", d, to_token({pass, mb, chunk}), stage);
  };
  auto count = [&](Pass pass) { return o.count[index_of(pass)]; };
  auto step = [&](Pass pass) { return o.step[index_of(pass)]; };
  for (Pass pass : {Pass::F, Pass::B, Pass::W, Pass::BW, Pass::O, Pass::L}) {
    if (count(pass) > 1) errors.add([&] { return fmt::format("{} appears {} times", where(pass), count(pass)); });
  }
  if (count(Pass::F) == 0) errors.add([&] { return fmt::format("{} is missing", where(Pass::F)); });
  const bool split = count(Pass::B) > 0 || count(Pass::W) > 0;
  const bool fused = count(Pass::BW) > 0;
  if (split && fused) {
    errors.add([&] { return fmt::format("{} has both a fused BW and a split B/W backward", where(Pass::BW)); });
  } else if (!split && !fused) {
    errors.add([&] {
      return fmt::format("{} is missing (no backward for this microbatch: need B and W, or BW)", where(Pass::B));
    });
  } else if (split && count(Pass::B) == 0) {
    errors.add([&] { return fmt::format("{} is missing (its W is there)", where(Pass::B)); });
  } else if (split && count(Pass::W) == 0) {
    errors.add([&] { return fmt::format("{} is missing (its B is there)", where(Pass::W)); });
  }
  const Pass backward = fused ? Pass::BW : Pass::B;
  if (step(Pass::F) != kAbsent && step(backward) != kAbsent && step(backward) < step(Pass::F)) {
    errors.add([&] {
      return fmt::format("d{}: {} at step {} comes before its forward {} at step {}", d,
                         to_token({backward, mb, chunk}), step(backward), to_token({Pass::F, mb, chunk}),
                         step(Pass::F));
    });
  }
  if (step(Pass::B) != kAbsent && step(Pass::W) != kAbsent && step(Pass::W) < step(Pass::B)) {
    errors.add([&] {
      return fmt::format("d{}: {} at step {} comes before its {} at step {}", d, to_token({Pass::W, mb, chunk}),
                         step(Pass::W), to_token({Pass::B, mb, chunk}), step(Pass::B));
    });
  }
  check_copies(o, stage, mb, problem, backward, errors);
}


// The order run with unit times (whether it deadlocks does not depend on the durations), the
// FIFO channel rule when asked, and the memory against the limit when asked.
void check_run(const Problem& problem, const Schedule& schedule, MemoryCheck memory, ChannelCheck channels,
               ValidationReport& report) {
  Problem unit = problem;
  std::fill(unit.t_f.begin(), unit.t_f.end(), 1.0);
  std::fill(unit.t_b.begin(), unit.t_b.end(), 1.0);
  std::fill(unit.t_w.begin(), unit.t_w.end(), 1.0);
  std::fill(unit.t_bw.begin(), unit.t_bw.end(), 2.0);
  std::fill(unit.t_comm.begin(), unit.t_comm.end(), 0.0);
  try {
    constexpr EvalOptions kMetricsOnly{.record_spans = false, .record_transfers = false, .record_memory = false};
    // What an offload frees depends on when its copy ends: with copies the peaks are the timed
    // run's, which tells a deadlock as well as the unit run.
    if (has_copies(schedule)) {
      report.peak_memory = evaluate(problem, schedule, kMetricsOnly).metrics.peak_memory;
    } else {
      evaluate(unit, schedule, kMetricsOnly);
    }
  } catch (const ScheduleError& e) {
    report.errors.emplace_back(e.what());
  }
  if (channels == ChannelCheck::fifo) {
    if (auto violation = channel_order_violation(problem, schedule)) report.errors.push_back(std::move(*violation));
  }
  if (memory == MemoryCheck::against_limit) {
    if (const auto over = first_over_limit(problem, report.peak_memory)) {
      report.errors.push_back("over-limit: " + over->reason());
    }
  }
}

}  // namespace

std::string ValidationReport::message() const {
  std::string out;
  for (const auto& error : errors) {
    out += error;
    if (!out.ends_with('\n')) out += '\n';
  }
  return out;
}

std::vector<double> peak_memory_by_order(const Problem& problem, const Schedule& schedule) {
  std::vector<double> peaks(schedule.devices.size(), 0.0);
  for (std::size_t d = 0; d < schedule.devices.size(); ++d) {
    double memory = 0;
    for (const Action& action : schedule.devices[d]) {
      if (action.chunk < 0 || action.chunk >= problem.chunks) continue;
      const int stage = problem.stage_of(static_cast<int>(d), action.chunk);
      memory += memory_delta(problem, action.pass, stage).net();
      peaks[d] = std::max(peaks[d], memory);
    }
  }
  return peaks;
}

ValidationReport check_schedule(const Problem& problem, const Schedule& schedule, MemoryCheck memory,
                                ChannelCheck channels) {
  ValidationReport report;
  if (std::optional<std::string> error = shape_error(problem, schedule)) {
    report.errors.push_back(std::move(*error));
    return report;
  }
  ErrorList errors(report.errors);
  const std::vector<Occurrence> seen = find_occurrences(problem, schedule, errors);
  const int m = problem.microbatches;
  for (int stage = 0; stage < problem.stages(); ++stage) {
    for (int mb = 0; mb < m; ++mb) {
      if (problem.path(mb).contains(stage))
        check_passes(seen[static_cast<std::size_t>(stage) * m + mb], stage, mb, problem, errors);
    }
  }
  errors.close();
  report.peak_memory = peak_memory_by_order(problem, schedule);
  if (!report.errors.empty()) return report;
  check_run(problem, schedule, memory, channels, report);
  return report;
}

void validate(const Problem& problem, const Schedule& schedule, MemoryCheck memory, ChannelCheck channels) {
  const ValidationReport report = check_schedule(problem, schedule, memory, channels);
  if (!report.ok()) {
    throw ScheduleError(fmt::format("schedule '{}' is not valid:\n{}", schedule.name, report.message()));
  }
}

}  // namespace zb
