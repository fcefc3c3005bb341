// List-scheduling evaluator: exact start/end of every action, in time linear in the schedule.
//
// Speed (bench/evaluator_bench.cpp): what an action needs is the same for every microbatch of a
// pass on a stage, so it is tabled once per evaluation (PassRule) and resolving an action in the
// loop is a few loads with no branch per kind of pass; finish times not reached yet are NaN, so
// one comparison tells readiness and a memset resets them; a woken device that still cannot run
// costs one such check; the running device's clocks stay in registers.
#include "sim/core/evaluator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>

#include "sim/core/deadlock_report.h"
#include "sim/support/error.h"
#include "sim/core/memory.h"
#include "sim/core/optimizer_step.h"
#include "sim/core/pass_time.h"

namespace zb {

namespace {

// A finish time not reached yet: every byte 0xFF, a NaN, which stays NaN whatever is added and
// fails `>= 0` (reached finish times are >= 0), and which memset can write.
constexpr unsigned char kNotDoneByte = 0xFF;

bool reached(double time) { return time >= 0; }

// What resolving an action checks before it indexes by chunk and microbatch: nothing (every
// action has been checked before the run), their ranges, or also the microbatch's path
// (bidirectional problems, whose microbatches run different stages).
enum class Check { none, range, path };

// What a run records: nothing (metrics only), the memory points and transfers its rules ask for
// (PassRule::records_*), or those and every compute span. (Told apart at compile time, the loop
// tests no cursor.)
enum class Record { nothing, by_rules, compute_spans_too };

// Evaluation::ends_ holds finish times by an action's key, stage * m + microbatch: F(s) at
// m + key, B(s) or BW(s) one kind further, W(s) (which nothing reads) one more, then, when the
// schedule has copies, O(s) and L(s); the first m slots always read 0: what F waits for on the
// first stage of its path.
struct EndsLayout {
  std::uint32_t m = 0;
  std::uint32_t kind = 0;  // stages x m: the slots of one kind of pass
  bool copies = false;     // the O and L kinds exist
  std::uint32_t forward(std::uint32_t key) const { return m + key; }
  std::uint32_t backward(std::uint32_t key) const { return m + kind + key; }
  std::uint32_t weight(std::uint32_t key) const { return m + 2 * kind + key; }
  std::uint32_t offload(std::uint32_t key) const { return m + 3 * kind + key; }
  std::uint32_t reload(std::uint32_t key) const { return m + 4 * kind + key; }
  std::uint32_t reload_shift() const { return 3 * kind; }  // backward(key) + this = reload(key)
  std::size_t size() const { return static_cast<std::size_t>(m) + (copies ? 5 : 3) * static_cast<std::size_t>(kind); }
};

// What an action of one pass on one stage needs, the same for every microbatch: where its
// input's finish time and its own live in ends_ (offsets from its key), how long it runs, which
// device its output wakes. Inputs: F(s) needs F(s-1) of the microbatch (the path's first stage:
// nothing); B(s) and BW(s) the backward of s+1 (the path's last stage: its own F); W(s) needs B(s).
struct PassRule {
  double duration = 0;  // the pass alone (pass_time); an overlapped pair's parts take their block's shares
  double delay = 0;     // added to the input's finish: comm_after across a stage boundary, else 0
  double transfer = 0;  // comm_after of the boundary its output crosses (> 0: a send and a recv span)
  MemoryDelta memory;
  // What the trace records of it besides its compute span, when the options ask for them: memory
  // points where a delta is not 0, the transfer when it takes time. (Folded in here, the loop
  // tests one flag, not the option too.)
  bool records_transfer = false;
  bool records_memory_at_start = false;
  bool records_memory_at_end = false;
  bool copy = false;  // O or L: runs on the device's copy engine, not its compute
  // Schedules with copies, B and BW: a second input, the reload of what their forward offloaded
  // (its slot: the output's, one EndsLayout::reload_shift further; 0 when nothing was offloaded).
  bool waits_for_reload = false;
  // Where its start goes: the stage's latest weight-gradient start (W or BW, when data
  // parallelism needs it), else a slot nothing reads.
  double* weight_grad_start = nullptr;
  std::uint32_t input = 0;   // key + input: the input's slot (unsigned arithmetic wraps)
  std::uint32_t output = 0;  // key + output: the action's own slot
  std::int32_t wake = -1;    // the device that consumes the output across a device boundary; -1: none
  std::int32_t stage = 0;
};

// rules[rule_index(pass, stage)].
std::size_t rule_index(Pass pass, int stage) {
  return static_cast<std::size_t>(stage) * kPassCount + static_cast<std::size_t>(pass);
}

// Per stage, the path of the microbatches that run it (every microbatch's path is a run of whole
// stages, so a stage's path does not depend on which of its microbatches runs).
std::vector<StagePath> stage_paths(const Problem& problem) {
  std::vector<StagePath> paths(static_cast<std::size_t>(problem.stages()), StagePath{0, problem.stages() - 1});
  for (int mb = 0; mb < problem.microbatches; ++mb) {
    if (mb > 0 && problem.path(mb).first == problem.path(mb - 1).first) continue;
    const StagePath path = problem.path(mb);
    for (int s = path.first; s <= path.last; ++s) paths[static_cast<std::size_t>(s)] = path;
  }
  return paths;
}

// `weight_grad_starts`: per stage, then one slot nothing reads; null when not tracked.
std::vector<PassRule> pass_rules(const Problem& problem, const EndsLayout& ends, double* weight_grad_starts,
                                 double* unread, const EvalOptions& options) {
  const bool memory = options.record_memory;
  const bool transfers = options.record_spans && options.record_transfers;
  const std::vector<StagePath> paths = stage_paths(problem);
  std::vector<PassRule> rules(static_cast<std::size_t>(problem.stages()) * kPassCount);
  for (int s = 0; s < problem.stages(); ++s) {
    const StagePath path = paths[static_cast<std::size_t>(s)];
    const int device = problem.device_of_stage(s);
    // Offsets from the key of microbatch 0 on stage s to slots of the same microbatch.
    const std::uint32_t key = static_cast<std::uint32_t>(s) * ends.m;
    const auto offset = [key](std::uint32_t slot) { return slot - key; };
    for (int k = 0; k < kPassCount; ++k) {
      const auto pass = static_cast<Pass>(k);
      PassRule& rule = rules[rule_index(pass, s)];
      rule.duration = pass_time(problem, pass, s);
      rule.memory = memory_delta(problem, pass, s);
      rule.records_memory_at_start = memory && rule.memory.at_start != 0;
      rule.records_memory_at_end = memory && rule.memory.at_end != 0;
      rule.stage = s;
      rule.copy = is_copy(pass);
      const bool weight_gradient = pass == Pass::W || pass == Pass::BW;
      rule.weight_grad_start = weight_gradient && weight_grad_starts != nullptr ? weight_grad_starts + s : unread;
      int consumer_stage = -1;
      switch (pass) {
        case Pass::F:
          rule.input = offset(s == path.first ? 0 : ends.forward(key - ends.m));
          rule.delay = s == path.first ? 0.0 : problem.comm_after(s - 1);
          rule.output = offset(ends.forward(key));
          if (s < path.last) consumer_stage = s + 1;
          break;
        case Pass::B:
        case Pass::BW:
          rule.input = offset(s == path.last ? ends.forward(key) : ends.backward(key + ends.m));
          rule.delay = s == path.last ? 0.0 : problem.comm_after(s);
          rule.output = offset(ends.backward(key));
          rule.waits_for_reload = ends.copies;
          if (s > path.first) consumer_stage = s - 1;
          break;
        case Pass::W:
          rule.input = offset(ends.backward(key));
          rule.output = offset(ends.weight(key));
          break;
        // Without the copies' slots (the evaluation of a schedule assumed to have none), a copy
        // takes NaN: its device's clock stays NaN from there, and the run ends in a way that sends
        // it to the evaluation with copies (Evaluation::run_step). No scan looks for copies first.
        case Pass::O:
          rule.input = offset(ends.forward(key));
          rule.output = offset(ends.copies ? ends.offload(key) : ends.weight(key));
          if (!ends.copies) rule.duration = std::numeric_limits<double>::quiet_NaN();
          break;
        case Pass::L:
          rule.input = offset(ends.copies ? ends.offload(key) : ends.forward(key));
          rule.output = offset(ends.copies ? ends.reload(key) : ends.weight(key));
          if (!ends.copies) rule.duration = std::numeric_limits<double>::quiet_NaN();
          break;
      }
      if (consumer_stage < 0) continue;
      const int consumer = problem.device_of_stage(consumer_stage);
      if (consumer != device) rule.wake = consumer;
      rule.transfer = problem.comm_after(std::min(s, consumer_stage));
      rule.records_transfer = transfers && rule.transfer > 0;
    }
  }
  return rules;
}

// An overlapped pair's block times, computed when a pair of its kind is first met.
struct PairBlock {
  BlockTimes times;
  bool known = false;
};

// A device's pairs by the chunk and pass of both parts: (c1 * kPassCount + pass1) * chunks *
// kPassCount + c2 * kPassCount + pass2, a few dozen kinds against thousands of pairs.
std::size_t pair_index(const Action& first, const Action& second, int chunks) {
  const auto part = [](const Action& action) {
    return static_cast<std::size_t>(action.chunk) * kPassCount + static_cast<std::size_t>(action.pass);
  };
  return part(first) * static_cast<std::size_t>(chunks) * kPassCount + part(second);
}

// One device's progress through its list, its clocks, and where its records go.
struct Lane {
  const Action* begin = nullptr;  // the device's list
  const Action* next = nullptr;   // the next action to run
  const Action* end = nullptr;
  // `next` resolved when the device last had to wait for its input: what a wake checks again.
  const PassRule* waiting = nullptr;
  std::uint32_t waiting_key = 0;
  const int* stage_of = nullptr;  // per chunk: the stage
  PairBlock* blocks = nullptr;    // the device's overlapped pairs by pair_index; null until a pair is met
  double clock = 0;               // when the device is free (the end of its last action)
  double first_start = std::numeric_limits<double>::infinity();
  double busy = 0;
  double memory = 0;
  double peak_memory = 0;
  Span* compute_span = nullptr;         // the next compute span, when recorded
  MemoryPoint* memory_point = nullptr;  // the next memory point, when recorded
  Span* transfer_span = nullptr;        // its next send or recv span, when recorded
};

// What an evaluation without the copies' slots throws when the schedule has copies after all.
struct CopiesMet {};

// A change of a device's memory at a time (schedules with copies, whose frees are not in list order).
struct MemoryEvent {
  double time = 0;
  double delta = 0;
  friend bool operator<(const MemoryEvent& a, const MemoryEvent& b) {
    return a.time != b.time ? a.time < b.time : a.delta < b.delta;  // at one time, frees first
  }
};

// The running device's clocks and record cursors, as locals that stay in registers.
struct Running {
  double clock;
  double first_start;
  double busy;
  double memory;
  double peak_memory;
  Span* compute_span;
  MemoryPoint* memory_point;
  Span* transfer_span;  // its sends'; its recvs are written while another device runs
};

class Evaluation {
 public:
  // `copies`: the schedule may have copies (O, L); without, one that has them throws CopiesMet.
  Evaluation(const Problem& problem, const Schedule& schedule, const EvalOptions& options, bool copies)
      : problem_(problem),
        schedule_(schedule),
        m_(problem.microbatches),
        layout_(checked_layout(problem, copies)),
        weight_grad_starts_(static_cast<std::size_t>(problem.stages()) + 1, 0.0),
        rules_(pass_rules(problem, layout_, needs_weight_grad_starts(problem) ? weight_grad_starts_.data() : nullptr,
                          &weight_grad_starts_.back(), options)),
        ends_(new double[layout_.size()]),
        stage_of_(static_cast<std::size_t>(problem.devices) * problem.chunks),
        path_(static_cast<std::size_t>(problem.microbatches)),
        lanes_(problem.devices),
        queued_(std::make_unique<bool[]>(problem.devices)),
        blocks_(problem.devices),
        worklist_(problem.devices),
        options_(options) {
    if (schedule.device_count() != problem.devices) {
      throw ScheduleError(fmt::format("schedule '{}' has {} devices but the problem has p={}", schedule.name,
                                      schedule.device_count(), problem.devices));
    }
    if (options.steps < 1) throw InputError(fmt::format("evaluator: steps is {}: need at least 1", options.steps));
    std::fill(ends_.get(), ends_.get() + m_, 0.0);
    reset_ends();
    if (layout_.copies) {
      memory_events_.resize(problem.devices);
      copy_free_.assign(2 * static_cast<std::size_t>(problem.devices), 0.0);
    }
    for (int d = 0; d < problem.devices; ++d) {
      for (int c = 0; c < problem.chunks; ++c)
        stage_of_[static_cast<std::size_t>(d) * problem.chunks + c] = problem.stage_of(d, c);
    }
    for (int mb = 0; mb < m_; ++mb) {
      path_[static_cast<std::size_t>(mb)] = problem.path(mb);
      paths_differ_ |= path_[static_cast<std::size_t>(mb)].first != 0 ||
                       path_[static_cast<std::size_t>(mb)].last != problem.stages() - 1;
    }
    for (int d = 0; d < problem.devices; ++d) {
      Lane& lane = lanes_[d];
      lane.begin = lane.next = schedule.devices[d].data();
      lane.end = lane.begin + schedule.devices[d].size();
      lane.stage_of = stage_of_.data() + static_cast<std::size_t>(d) * problem.chunks;
    }
    const auto steps = static_cast<std::size_t>(options.steps);
    const bool transfers = options.record_spans && options.record_transfers;
    std::vector<std::size_t> transfer_counts(problem.devices, 0);
    std::vector<std::size_t> memory_counts(problem.devices, 0);
    // Recording walks every action once to size the records, and checks them on the way, so
    // that its run resolves actions without checks.
    if (options.record_spans || options.record_memory) every_action_inside_ = count_records(transfer_counts, memory_counts);
    // Every span goes straight to its final place in one vector: device d's compute spans of
    // every step start at offset_[d], then come each device's transfers (sends and recvs in the
    // order they happen). (Recording per device and laying out at the end measured slower: the
    // copy costs more than the fill.)
    offset_.resize(problem.devices + 1, 0);
    for (int d = 0; d < problem.devices; ++d) offset_[d + 1] = offset_[d] + steps * schedule.devices[d].size();
    std::size_t total = offset_.back();
    std::vector<std::size_t> transfer_offset(problem.devices, 0);
    if (transfers) {
      for (int d = 0; d < problem.devices; ++d) {
        transfer_offset[d] = total;
        total += steps * transfer_counts[d];
      }
    }
    // Filled from one value: resize() value-initialises span by span, a memset call each.
    if (options.record_spans) spans_.assign(total, Span{});
    for (int d = 0; d < problem.devices && options.record_spans; ++d) {
      lanes_[d].compute_span = spans_.data() + offset_[d];
      if (transfers) lanes_[d].transfer_span = spans_.data() + transfer_offset[d];
    }
    // Sized exactly, so that recording writes through a cursor and never reallocates.
    if (options.record_memory) {
      memory_.resize(problem.devices);
      for (int d = 0; d < problem.devices; ++d) {
        memory_[d].resize(1 + steps * memory_counts[d]);
        lanes_[d].memory_point = memory_[d].data() + 1;
      }
    }
  }

  Trace run() {
    std::vector<double> gradients_ready(lanes_.size());
    const bool recording = !spans_.empty() || !memory_.empty();
    if (recording && !every_action_inside_) refuse_outside_actions();
    for (step_ = 0; step_ < options_.steps; ++step_) {
      if (layout_.copies) {
        run_step_of_kind<true>(recording);
        settle_memory();
      } else {
        run_step_of_kind<false>(recording);
      }
      for (std::size_t d = 0; d < lanes_.size(); ++d) {
        gradients_ready[d] = zb::gradients_ready(problem_, static_cast<int>(d), lanes_[d].clock, weight_grad_starts_);
      }
      if (step_ == 0) first_step_ = lanes_;
      if (step_ + 1 == options_.steps) break;
      // The next step starts on each device once its optimizer step lets it.
      const StepBoundary boundary = step_boundary(problem_, gradients_ready, options_.optimizer);
      step_ends_.push_back(*std::max_element(boundary.ready.begin(), boundary.ready.end()));
      for (std::size_t d = 0; d < lanes_.size(); ++d) {
        lanes_[d].next = lanes_[d].begin;
        lanes_[d].waiting = nullptr;
        lanes_[d].clock = boundary.ready[d];
        if (layout_.copies) copy_free_[2 * d] = copy_free_[2 * d + 1] = boundary.ready[d];
      }
      reset_ends();
    }
    const StepBoundary boundary = step_boundary(problem_, gradients_ready, options_.optimizer);
    step_ends_.push_back(*std::max_element(boundary.ready.begin(), boundary.ready.end()));
    return finish();
  }

 private:
  static EndsLayout checked_layout(const Problem& problem, bool copies) {
    const double slots = static_cast<double>(problem.microbatches) * (1.0 + (copies ? 5.0 : 3.0) * problem.stages());
    if (slots > std::numeric_limits<std::uint32_t>::max()) {
      throw InputError(
          fmt::format("evaluator: {} stages x m={} is too large to evaluate", problem.stages(), problem.microbatches));
    }
    const auto m = static_cast<std::uint32_t>(problem.microbatches);
    return {m, static_cast<std::uint32_t>(problem.stages()) * m, copies};
  }

  // Every F, B and O finish not reached (the W slots are never read); every reload at 0, so that
  // a backward whose forward was not offloaded waits for none.
  void reset_ends() {
    std::memset(ends_.get() + layout_.forward(0), kNotDoneByte, 2 * sizeof(double) * layout_.kind);
    if (!layout_.copies) return;
    std::memset(ends_.get() + layout_.offload(0), kNotDoneByte, sizeof(double) * layout_.kind);
    std::fill(ends_.get() + layout_.reload(0), ends_.get() + layout_.reload(0) + layout_.kind, 0.0);
  }

  template <bool kCopies>
  void run_step_of_kind(bool recording) {
    if (!recording) {
      paths_differ_ ? run_step<Record::nothing, Check::path, kCopies>()
                    : run_step<Record::nothing, Check::range, kCopies>();
    } else if (spans_.empty()) {
      run_step<Record::by_rules, Check::none, kCopies>();
    } else {
      run_step<Record::compute_spans_too, Check::none, kCopies>();
    }
  }

  // Schedules with copies: each device's memory events of the step in time order, its peak, and
  // its memory points when recorded (as many as a run in list order writes).
  void settle_memory() {
    for (std::size_t d = 0; d < lanes_.size(); ++d) {
      Lane& lane = lanes_[d];
      std::vector<MemoryEvent>& events = memory_events_[d];
      std::sort(events.begin(), events.end());
      for (const MemoryEvent& event : events) {
        lane.memory += event.delta;
        lane.peak_memory = std::max(lane.peak_memory, lane.memory);
        if (lane.memory_point != nullptr) *lane.memory_point++ = {event.time, lane.memory};
      }
      events.clear();
    }
  }

  // Per device, the transfer spans (as sender and as receiver) and the memory points of one step:
  // how many actions of each chunk and pass it has, then their rules. Returns whether every action
  // is inside the problem.
  bool count_records(std::vector<std::size_t>& transfers, std::vector<std::size_t>& memory) const {
    const auto chunks = static_cast<std::uint32_t>(problem_.chunks);
    const auto m = static_cast<std::uint32_t>(m_);
    std::vector<std::size_t> count(static_cast<std::size_t>(chunks) * kPassCount);  // [chunk * kPassCount + pass]
    bool inside = true;
    for (std::size_t d = 0; d < lanes_.size(); ++d) {
      const Lane& lane = lanes_[d];
      std::fill(count.begin(), count.end(), 0);
      for (const Action* action = lane.begin; action != lane.end; ++action) {
        if (static_cast<std::uint32_t>(action->chunk) >= chunks ||
            static_cast<std::uint32_t>(action->microbatch) >= m) {
          inside = false;
          continue;
        }
        ++count[static_cast<std::size_t>(action->chunk) * kPassCount + static_cast<std::size_t>(action->pass)];
      }
      // A second walk, so that the first tests nothing else: the counts matter only when the
      // run can end, when every action is inside.
      for (const Action* action = lane.begin; paths_differ_ && inside && action != lane.end; ++action) {
        inside = path_[static_cast<std::size_t>(action->microbatch)].contains(lane.stage_of[action->chunk]);
      }
      for (std::uint32_t c = 0; c < chunks; ++c) {
        for (int k = 0; k < kPassCount; ++k) {
          const std::size_t n = count[c * kPassCount + static_cast<std::size_t>(k)];
          const PassRule& rule = rules_[rule_index(static_cast<Pass>(k), lane.stage_of[c])];
          memory[d] += n * ((rule.records_memory_at_start ? 1 : 0) + (rule.records_memory_at_end ? 1 : 0));
          if (!rule.records_transfer) continue;
          transfers[d] += n;
          transfers[static_cast<std::size_t>(rule.wake)] += n;
        }
      }
    }
    return inside;
  }

  // A recording run resolves actions unchecked: when some action is outside the problem, the
  // checked run refuses it (or the deadlock before it), as a run that does not record would.
  [[noreturn, gnu::noinline, gnu::cold]] void refuse_outside_actions() {
    if (layout_.copies) {
      run_step_of_kind<true>(false);
    } else {
      run_step_of_kind<false>(false);
    }
    throw std::logic_error(fmt::format("evaluator: schedule '{}' ran an action outside the problem", schedule_.name));
  }

  template <Record kRecord, Check kCheck, bool kCopies>
  void run_step() {
    // Last in, first out; each device at most once (queued_), so p entries always suffice.
    int* const worklist = worklist_.data();
    int* top = worklist;
    for (std::size_t d = lanes_.size(); d-- > 0;) *top++ = static_cast<int>(d);
    std::fill(queued_.get(), queued_.get() + lanes_.size(), true);
    while (top != worklist) {
      const int d = *--top;
      queued_[d] = false;
      while (advance<kRecord, kCheck, kCopies>(d, top)) {
      }
    }
    std::vector<std::size_t> position(lanes_.size());
    bool stuck = false;
    for (std::size_t d = 0; d < lanes_.size(); ++d) {
      position[d] = static_cast<std::size_t>(lanes_[d].next - lanes_[d].begin);
      stuck |= lanes_[d].next != lanes_[d].end;
    }
    // A copy met without the copies' slots: its device's clock went NaN (PassRule's case O).
    if (!layout_.copies && (stuck || std::any_of(lanes_.begin(), lanes_.end(), [](const Lane& lane) {
                              return !(lane.clock >= 0);
                            }))) {
      if (has_copies(schedule_)) throw CopiesMet{};
    }
    if (stuck) {
      throw ScheduleError(
          fmt::format("schedule '{}' deadlocks\n{}", schedule_.name, deadlock_report(problem_, schedule_, position)));
    }
  }

  // The rule and key (stage * m + microbatch) of device d's `action`; refuses an action outside
  // the problem as far as kCheck tells.
  template <Check kCheck>
  [[gnu::always_inline]] const PassRule& resolve(int d, const Lane& lane, const Action* action,
                                                 std::uint32_t& key) const {
    // Unsigned comparisons also refuse negative values.
    if (kCheck != Check::none &&
        (static_cast<std::uint32_t>(action->chunk) >= static_cast<std::uint32_t>(problem_.chunks) ||
         static_cast<std::uint32_t>(action->microbatch) >= static_cast<std::uint32_t>(m_))) {
      refuse_outside(d, action);
    }
    const int stage = lane.stage_of[action->chunk];
    if (kCheck == Check::path && !path_[static_cast<std::size_t>(action->microbatch)].contains(stage)) {
      refuse_outside(d, action);
    }
    key = static_cast<std::uint32_t>(stage) * static_cast<std::uint32_t>(m_) +
          static_cast<std::uint32_t>(action->microbatch);
    return rules_[rule_index(action->pass, stage)];
  }

  // When the action's inputs are ready; with copies, also its reload (a NaN input stays NaN).
  template <bool kCopies>
  double ready_time(const PassRule& rule, std::uint32_t key) const {
    const double input = ends_[key + rule.input] + rule.delay;
    if (!kCopies || !rule.waits_for_reload) return input;
    return std::max(input, ends_[key + rule.output + layout_.reload_shift()]);
  }

  // Runs device d until it finishes or needs an input that is not ready yet, and pushes onto the
  // worklist the devices its outputs wake. An overlapped pair starts once both parts' inputs are
  // ready; both outputs exist when the block ends.
  // Returns true when it stopped at a pair whose block it has just computed: call it again.
  template <Record kRecord, Check kCheck, bool kCopies>
  [[gnu::always_inline]] bool advance(int d, int*& top) {
    Lane& lane = lanes_[d];
    const Action* action = lane.next;
    if (action == lane.end) return false;
    std::uint32_t key = lane.waiting_key;
    const PassRule* rule = lane.waiting != nullptr ? lane.waiting : &resolve<kCheck>(d, lane, action, key);
    double ready = ready_time<kCopies>(*rule, key);
    if (!reached(ready)) {  // woken, but still waiting
      lane.waiting = rule;
      lane.waiting_key = key;
      return false;
    }
    Running run{lane.clock,        lane.first_start,  lane.busy,         lane.memory,
                lane.peak_memory,  lane.compute_span, lane.memory_point, lane.transfer_span};
    // No call in the loop but the errors' (which never return): a value live across a call
    // would live in memory, every double among them.
    bool block_unknown = false;  // stopped at a pair whose block is not computed yet
    for (;;) {
      if (action->overlap_next && action + 1 != lane.end) {
        std::uint32_t partner_key = 0;
        const PassRule& partner = resolve<kCheck>(d, lane, action + 1, partner_key);
        const double partner_ready = ready_time<kCopies>(partner, partner_key);
        if (!reached(partner_ready)) break;
        const PairBlock* known =
            lane.blocks == nullptr ? nullptr : &lane.blocks[pair_index(*action, action[1], problem_.chunks)];
        if (known == nullptr || !known->known) {
          block_unknown = true;
          break;
        }
        const BlockTimes& block = known->times;
        const double start = std::max({run.clock, ready, partner_ready});
        finish<kRecord, kCopies>(d, run, action, *rule, key, start, start + block.first, start + block.total(), top);
        ++action;
        finish<kRecord, kCopies>(d, run, action, partner, partner_key, start + block.first, start + block.total(),
                                 start + block.total(), top);
      } else if (kCopies && rule->copy) {
        copy<kRecord>(d, run, action, *rule, key, ready);
      } else {
        const double start = std::max(run.clock, ready);
        const double end = start + rule->duration;
        finish<kRecord, kCopies>(d, run, action, *rule, key, start, end, end, top);
      }
      if (++action == lane.end) break;
      rule = &resolve<kCheck>(d, lane, action, key);
      ready = ready_time<kCopies>(*rule, key);
      if (!reached(ready)) break;
    }
    lane.next = action;
    lane.waiting = rule;  // `action`'s, unless the device has finished
    lane.waiting_key = key;
    lane.clock = run.clock;
    lane.first_start = run.first_start;
    lane.busy = run.busy;
    lane.memory = run.memory;
    lane.peak_memory = run.peak_memory;
    lane.compute_span = run.compute_span;
    lane.memory_point = run.memory_point;
    lane.transfer_span = run.transfer_span;
    if (!block_unknown) return false;
    learn_pair_block(d, lane, *action, action[1]);
    return true;
  }

  // Device d's copy `action` (O or L), issued when the device reaches it in its list (its compute
  // goes on): it starts once the device's previous compute has ended, its input is there and the
  // copy engine of its direction is free.
  template <Record kRecord>
  [[gnu::noinline]] void copy(int d, Running& run, const Action* action, const PassRule& rule,
                              std::uint32_t key, double ready) {
    double& engine_free = copy_free_[2 * static_cast<std::size_t>(d) + (action->pass == Pass::O ? 0 : 1)];
    const double start = std::max({run.clock, ready, engine_free});
    const double end = start + rule.duration;
    engine_free = end;
    if (kRecord == Record::compute_spans_too) {
      *run.compute_span++ = {d, Stream::copy, action->pass, false, rule.stage, action->microbatch, action->chunk,
                             step_, start, end};
    }
    record_memory_events(d, rule, start, end);
    ends_[key + rule.output] = end;
  }

  [[gnu::noinline]] void record_memory_events(int d, const PassRule& rule, double start, double end) {
    if (rule.memory.at_start != 0) memory_events_[static_cast<std::size_t>(d)].push_back({start, rule.memory.at_start});
    if (rule.memory.at_end != 0) memory_events_[static_cast<std::size_t>(d)].push_back({end, rule.memory.at_end});
  }

  // Device d's `action` ran [start, end] and hands its output over at `output_at` (the end of
  // its block: a pair's first part hands over with the second).
  template <Record kRecord, bool kCopies>
  [[gnu::always_inline]] void finish(int d, Running& run, const Action* action, const PassRule& rule, std::uint32_t key,
                                     double start, double end, double output_at, int*& top) {
    run.clock = output_at;
    run.first_start = std::min(run.first_start, start);
    run.busy += end - start;
    if (kRecord == Record::compute_spans_too) {
      *run.compute_span++ = {
          d,     Stream::compute, action->pass, action->overlap_next, rule.stage, action->microbatch, action->chunk,
          step_, start,           end};
    }
    if (kCopies) {  // settled by time at the step's end: a copy's free may come after later compute
      record_memory_events(d, rule, start, end);
    } else {
      // Adding a zero delta leaves the value as it is, so only the recording tests for it.
      run.memory += rule.memory.at_start;
      if (kRecord != Record::nothing && rule.records_memory_at_start) *run.memory_point++ = {start, run.memory};
      run.peak_memory = std::max(run.peak_memory, run.memory);
      run.memory += rule.memory.at_end;
      if (kRecord != Record::nothing && rule.records_memory_at_end) *run.memory_point++ = {end, run.memory};
    }
    *rule.weight_grad_start = start;
    ends_[key + rule.output] = output_at;
    if (rule.wake < 0) return;
    // Wake the device that consumes this output across a device boundary.
    if (!queued_[rule.wake]) {
      queued_[rule.wake] = true;
      *top++ = rule.wake;
    }
    if (kRecord != Record::nothing && rule.records_transfer) {
      const double arrival = output_at + rule.transfer;
      *run.transfer_span++ = {d,     Stream::send, action->pass, false, rule.stage, action->microbatch, action->chunk,
                              step_, output_at,    arrival};
      *lanes_[rule.wake].transfer_span++ = {rule.wake,          Stream::recv,  action->pass, false,     rule.stage,
                                      action->microbatch, action->chunk, step_,        output_at, arrival};
    }
  }

  // Computes the block of device d's overlapped pair (first, second), whose chunks have been checked.
  [[gnu::noinline]] void learn_pair_block(int d, Lane& lane, const Action& first, const Action& second) {
    if (lane.blocks == nullptr) {
      const auto kinds = static_cast<std::size_t>(problem_.chunks) * kPassCount;
      blocks_[d].resize(kinds * kinds);
      lane.blocks = blocks_[d].data();
    }
    PairBlock& block = lane.blocks[pair_index(first, second, problem_.chunks)];
    block.times =
        overlapped_times(problem_, first.pass, stage_of(d, first.chunk), second.pass, stage_of(d, second.chunk));
    block.known = true;
  }

  // The caller has checked 0 <= chunk < chunks.
  int stage_of(int device, int chunk) const {
    return stage_of_[static_cast<std::size_t>(device) * problem_.chunks + chunk];
  }

  // Out of line, so that the hot loop keeps no state alive for the error's text.
  [[noreturn, gnu::noinline, gnu::cold]] void refuse_outside(int d, const Action* at) const {
    const Action& action = *at;
    const auto step = static_cast<std::size_t>(at - lanes_[d].begin);
    if (action.chunk < 0 || action.chunk >= problem_.chunks || action.microbatch < 0 || action.microbatch >= m_) {
      throw ScheduleError(
          fmt::format("schedule '{}': d{} step {}: action {} is outside the problem (m={}, "
                      "chunks={})",
                      schedule_.name, d, step, to_token(action), m_, problem_.chunks));
    }
    const int stage = stage_of(d, action.chunk);
    const StagePath path = path_[static_cast<std::size_t>(action.microbatch)];
    throw ScheduleError(
        fmt::format("schedule '{}': d{} step {}: action {} is outside the problem (microbatch {} "
                    "runs stages {}..{}, not stage {})",
                    schedule_.name, d, step, to_token(action), action.microbatch, path.first, path.last, stage));
  }

  Trace finish() {
    Trace trace;
    trace.meta.schedule = schedule_.name;
    trace.meta.engine = "eval";
    trace.meta.time_unit = problem_.time_unit;
    trace.devices = problem_.devices;
    trace.spans = std::move(spans_);
    trace.memory = std::move(memory_);
    trace.step_ends = std::move(step_ends_);

    Metrics& metrics = trace.metrics;
    const std::size_t p = lanes_.size();
    metrics.device_span.resize(p);
    metrics.busy.resize(p);
    metrics.idle.resize(p);
    metrics.peak_memory.resize(p);
    for (std::size_t d = 0; d < p; ++d) {
      const Lane& lane = first_step_[d];
      const bool ran = lane.next != lane.begin;
      metrics.device_span[d] = ran ? lane.clock - lane.first_start : 0.0;
      metrics.busy[d] = lane.busy;
      metrics.peak_memory[d] = lane.peak_memory;
      metrics.makespan = std::max(metrics.makespan, lane.clock);
      metrics.span = std::max(metrics.span, metrics.device_span[d]);
    }
    for (std::size_t d = 0; d < p; ++d) metrics.idle[d] = metrics.makespan - metrics.busy[d];
    // Without overlapped pairs compute_work is Problem::work() (pass_time.h), which spares a walk
    // over every action. Every pair has been met: the run reached every action.
    const bool pairs = std::any_of(blocks_.begin(), blocks_.end(), [](const auto& b) { return !b.empty(); });
    metrics.work = pairs ? compute_work(problem_, schedule_) : problem_.work();
    metrics.bubble_rate = metrics.span > 0 ? (metrics.span - metrics.work) / metrics.span : 0.0;
    return trace;
  }

  const Problem& problem_;
  const Schedule& schedule_;
  const int m_;
  const EndsLayout layout_;
  std::vector<double> weight_grad_starts_;  // per stage: start of its latest W or BW, when tracked; a spare last
  const std::vector<PassRule> rules_;       // [rule_index(pass, stage)]
  std::unique_ptr<double[]> ends_;          // finish times (EndsLayout); W slots: written, never read, not initialised
  std::vector<int> stage_of_;               // [device * chunks + chunk]
  std::vector<StagePath> path_;             // per microbatch
  bool paths_differ_ = false;               // some microbatch runs fewer than all stages (bidirectional)
  bool every_action_inside_ = false;        // checked by count_records, before a recording run
  std::vector<Lane> lanes_;
  std::unique_ptr<bool[]> queued_;              // per device: in the worklist (or running); bool: no char aliasing
  std::vector<std::vector<PairBlock>> blocks_;  // per device: its overlapped pairs' blocks; empty: none met
  std::vector<int> worklist_;                   // storage of run_step's worklist
  std::vector<Lane> first_step_;                // lanes_ at the end of the first step: the metrics
  const EvalOptions& options_;
  int step_ = 0;
  std::vector<double> step_ends_;
  std::vector<std::size_t> offset_;   // first compute span of each device
  std::vector<Span> spans_;           // the trace's spans; empty when not recorded
  std::vector<std::vector<MemoryPoint>> memory_;
  std::vector<std::vector<MemoryEvent>> memory_events_;  // per device, schedules with copies: this step's
  // Schedules with copies: when each device's copy engine is free, per direction (to the host, from
  // it: PCIe is full duplex), at [2 d] and [2 d + 1].
  std::vector<double> copy_free_;
};

}  // namespace

Trace evaluate(const Problem& problem, const Schedule& schedule, const EvalOptions& options) {
  try {
    return Evaluation(problem, schedule, options, false).run();
  } catch (const CopiesMet&) {
    return Evaluation(problem, schedule, options, true).run();
  }
}

}  // namespace zb
