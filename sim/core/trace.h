// What every engine (evaluator, SimGrid, executor) produces: timed spans, memory, metrics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/action.h"
#include "sim/support/time_units.h"

namespace zb {

// copy: a device's copy engine (activation offload and reload, Pass::O and Pass::L).
enum class Stream : std::uint8_t { compute, send, recv, copy };
std::string_view stream_name(Stream stream);
Stream parse_stream(std::string_view text, std::string_view context);

// A timed interval on one stream of one device. For send/recv spans `pass` is the pass whose
// output travels (F: activation forward, B or BW: gradient backward), `stage` the producing stage.
// The small fields come first, so that a span takes 40 bytes, not 48 (traces hold millions).
struct Span {
  std::int32_t device = 0;
  Stream stream = Stream::compute;
  Pass pass = Pass::F;
  // Compute spans: this span and the device's next compute span are the two parts of one
  // overlapped block (Action::overlap_next), drawn as one box in two colours.
  bool overlap_next = false;
  std::int32_t stage = 0;
  std::int32_t microbatch = 0;
  std::int32_t chunk = 0;
  // The training step (0-based) of a trace that holds several.
  std::int32_t step = 0;
  double start = 0;
  double end = 0;

  double duration() const { return end - start; }
};

// Live activation memory of a device from `time` on.
struct MemoryPoint {
  double time = 0;
  double value = 0;
};

// The metrics of docs/design.md section 3, of the trace's first step.
struct Metrics {
  double makespan = 0;     // last end, from t = 0
  double span = 0;         // largest device span (end of last - start of first compute action)
  double work = 0;         // bubble-free time of the busiest device
  double bubble_rate = 0;  // (span - work) / span
  std::vector<double> device_span;  // per device
  std::vector<double> busy;         // per device: total compute time
  std::vector<double> idle;         // per device: makespan - busy
  std::vector<double> peak_memory;  // per device
};

struct TraceMeta {
  std::string schedule;
  std::string engine;           // "eval", "simgrid", "cpu", "cuda", ...
  TimeUnit time_unit = TimeUnit::ms;
  std::string problem_json;     // the problem as JSON text (may be empty)
  // What the memory values count: "bytes" (measured), "GB" (a model-driven problem), or empty:
  // the units of the problem's mem_f (M_B when mem_f is 1).
  std::string memory_unit;
};

struct Trace {
  TraceMeta meta;
  int devices = 0;
  std::vector<Span> spans;                        // compute spans in device order, then transfers
  std::vector<std::vector<MemoryPoint>> memory;   // per device, time-ordered
  Metrics metrics;
  // Engines that model the optimizer step (optimizer_step.h): per step, when every device's
  // update of that step is final. Empty for measured traces.
  std::vector<double> step_ends;
};

// Fills trace.metrics from the spans of the first step and the memory timeline; `work` is the
// bubble-free time of the busiest device (Problem::work() for simulated traces).
Metrics compute_metrics(const Trace& trace, double work);

// Peak of a memory timeline (0 when empty).
double peak_of(const std::vector<MemoryPoint>& timeline);

}  // namespace zb
