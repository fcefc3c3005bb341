// Chrome trace event JSON (Perfetto, chrome://tracing, DevTools): a process per device, a thread
// per stream lane, flows bound to the slices they join, step markers, metadata and a memory counter.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <tuple>

#include "sim/support/error.h"
#include "sim/core/problem_spec.h"
#include "sim/support/time_units.h"
#include "sim/formats/detail/trace_lanes.h"
#include "sim/formats/trace_writers.h"

namespace zb {

namespace {

// The category of every pass and transfer slice and of the flows between them: DevTools binds a
// flow event to the slice with the same category, pid, tid and ts, and one flow keeps one
// category from start to end, so the slices a flow passes through must share it.
constexpr std::string_view kPipelineCategory = "pipeline";

// Times are written in whole nanoseconds (as microseconds with up to three decimals): ts + dur
// is then exact for every reader (Perfetto keeps int64 ns), so slices that touch never overlap by
// a rounding and a flow's ts equals its slice's.
long long to_ns(double time, double us_per_unit) { return std::llround(time * us_per_unit * 1000.0); }

std::string us_text(long long ns) {
  const long long magnitude = std::llabs(ns);
  std::string text = fmt::format("{}{}", ns < 0 ? "-" : "", magnitude / 1000);
  if (const long long fraction = magnitude % 1000; fraction != 0) {
    std::string digits = fmt::format("{:03}", fraction);
    while (digits.back() == '0') digits.pop_back();
    text += "." + digits;
  }
  return text;
}

// The duration from `start_ns` to `end_ns`. Readers that add ts and dur in double microseconds
// (DevTools, chrome://tracing) must land exactly on the end's ts, or a slice that ends where the
// next begins would overlap it by a rounding; when the whole-ns decimal does not, the nearest
// double that does (a few ulps away, still the same ns for Perfetto's llround) is written.
std::string duration_text(long long start_ns, long long end_ns) {
  const std::string exact = us_text(end_ns - start_ns);
  const double start = std::stod(us_text(start_ns)), end = std::stod(us_text(end_ns));
  double duration = std::stod(exact);
  if (start + duration == end) return exact;
  const double toward = start + duration > end ? -INFINITY : INFINITY;
  for (int step = 0; step < 64; ++step) {
    duration = std::nextafter(duration, toward);
    if (start + duration == end) return fmt::format("{}", duration);
  }
  return exact;
}

// What a produced output is known by: (forward or backward, producing stage, microbatch, step).
using OutputKey = std::tuple<bool, int, int, int>;
OutputKey output_of(const Span& span) { return {span.pass == Pass::F, span.stage, span.microbatch, span.step}; }

// The memory counter's values and the unit its name states.
struct MemoryScale {
  std::string unit;
  double divisor = 1;
};

// The problem the trace ran, when its meta carries one that builds.
std::optional<Problem> problem_of(const TraceMeta& meta) {
  if (meta.problem_json.empty()) return std::nullopt;
  try {
    return problem_spec_from_json(nlohmann::json::parse(meta.problem_json), "trace meta").build("trace meta");
  } catch (const std::exception&) {
    return std::nullopt;  // a partial problem (e.g. written by hand): drawn without it
  }
}

// Unit from the meta when the engine states it; otherwise the problem's mem_f units, shown as
// multiples of M_B (the activations of one microbatch, the unit of memory limits like "2p").
MemoryScale memory_scale(const TraceMeta& meta, const std::optional<Problem>& problem) {
  if (!meta.memory_unit.empty()) return {meta.memory_unit, 1};
  if (problem && problem->activation_unit() > 0) return {"M_B", problem->activation_unit()};
  return {"mem_f units", 1};
}

// One row of a device: a stream lane, or the device's step markers.
struct Row {
  Stream stream = Stream::compute;
  int lane = 0;
  int lanes = 1;
  bool steps = false;
};

class TraceWriter {
 public:
  TraceWriter(std::string& out, bool& first_event, long long& flow_id)
      : out_(out), first_event_(first_event), flow_id_(flow_id) {}

  void write(const std::string& label, const Trace& trace, int pid_base) {
    trace_ = &trace;
    pid_base_ = pid_base;
    us_ = microseconds_per(trace.meta.time_unit);
    problem_ = problem_of(trace.meta);
    assign_rows();
    write_metadata(label);
    write_slices();
    write_step_markers(label);
    write_flows();
    write_memory();
  }

 private:
  void emit(const std::string& event) {
    if (!first_event_) out_ += ",\n";
    first_event_ = false;
    out_ += event;
  }
  std::string ts(double time) const { return us_text(to_ns(time, us_)); }
  std::string dur(double start, double end) const { return duration_text(to_ns(start, us_), to_ns(end, us_)); }
  int pid(int device) const { return pid_base_ + device; }

  // Lanes per device and stream (trace_lanes.h); an overlapped pair is one interval, its block.
  void assign_rows() {
    const std::vector<Span>& spans = trace_->spans;
    tid_.assign(spans.size(), 0);
    std::map<std::pair<int, Stream>, std::vector<std::size_t>> members;  // first span of each interval
    for (std::size_t i = 0; i < spans.size(); ++i) {
      if (i > 0 && spans[i - 1].overlap_next) continue;  // the second part rides with the first
      members[{spans[i].device, spans[i].stream}].push_back(i);
    }
    std::map<std::pair<int, Stream>, std::vector<int>> lanes_of;
    std::map<std::pair<int, Stream>, int> lane_count;
    for (const auto& [key, firsts] : members) {
      std::vector<LaneInterval> intervals;
      for (std::size_t i : firsts) intervals.push_back({spans[i].start, block_end(i)});
      std::vector<int> lanes = assign_lanes(intervals);
      int count = 0;
      for (int lane : lanes) count = std::max(count, lane + 1);
      lane_count[key] = count;
      lanes_of[key] = std::move(lanes);
    }
    // Threads of a device: compute lanes, copy lanes (offload, reload), send lanes, recv lanes, then its step markers.
    rows_.assign(static_cast<std::size_t>(trace_->devices), {});
    std::map<std::pair<int, Stream>, int> first_tid;
    for (int d = 0; d < trace_->devices; ++d) {
      auto& rows = rows_[static_cast<std::size_t>(d)];
      for (Stream stream : {Stream::compute, Stream::copy, Stream::send, Stream::recv}) {
        const auto it = lane_count.find({d, stream});
        const int count = it == lane_count.end() ? (stream == Stream::compute ? 1 : 0) : it->second;
        first_tid[{d, stream}] = static_cast<int>(rows.size());
        for (int lane = 0; lane < count; ++lane) rows.push_back({stream, lane, count, false});
      }
      steps_tid_.push_back(static_cast<int>(rows.size()));
      rows.push_back({Stream::compute, 0, 1, true});
    }
    for (const auto& [key, firsts] : members) {
      for (std::size_t k = 0; k < firsts.size(); ++k) {
        const std::size_t i = firsts[k];
        tid_[i] = first_tid[key] + lanes_of[key][k];
        if (spans[i].overlap_next && i + 1 < spans.size()) tid_[i + 1] = tid_[i];
      }
    }
  }

  // The end of the interval a span opens: its own, or its pair's second part's.
  double block_end(std::size_t i) const {
    const std::vector<Span>& spans = trace_->spans;
    return spans[i].overlap_next && i + 1 < spans.size() ? spans[i + 1].end : spans[i].end;
  }

  void write_metadata(const std::string& label) {
    const Metrics& metrics = trace_->metrics;
    nlohmann::json args = {{"label", label},
                           {"schedule", trace_->meta.schedule},
                           {"engine", trace_->meta.engine},
                           {"time_unit", time_unit_name(trace_->meta.time_unit)},
                           {"devices", trace_->devices},
                           {"makespan", metrics.makespan},
                           {"span", metrics.span},
                           {"work", metrics.work},
                           {"bubble_rate", metrics.bubble_rate},
                           {"peak_memory", metrics.peak_memory},
                           {"memory_unit", memory_scale(trace_->meta, problem_).unit}};
    if (!trace_->step_ends.empty()) args["step_ends"] = trace_->step_ends;
    if (!trace_->meta.problem_json.empty()) args["problem"] = nlohmann::json::parse(trace_->meta.problem_json);
    emit(fmt::format(R"({{"ph":"M","name":"zbsim_trace","pid":{},"tid":0,"args":{}}})", pid(0), args.dump()));
    for (int d = 0; d < trace_->devices; ++d) {
      const std::string name = nlohmann::json(fmt::format("{} d{}", label, d)).dump();
      emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":{}}}}})", pid(d), name));
      emit(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"args":{{"sort_index":{}}}}})", pid(d), pid(d)));
      const auto& rows = rows_[static_cast<std::size_t>(d)];
      for (std::size_t tid = 0; tid < rows.size(); ++tid) {
        const Row& row = rows[tid];
        std::string thread = row.steps ? fmt::format("d{} steps", d) : fmt::format("d{} {}", d, stream_name(row.stream));
        if (!row.steps && row.lanes > 1) thread += fmt::format(" {}/{}", row.lane + 1, row.lanes);
        emit(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}"}}}})", pid(d), tid,
                         thread));
        emit(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
                         pid(d), tid, tid));
      }
    }
  }

  void write_slices() {
    // The device of each stage, for a transfer's peer.
    for (const Span& span : trace_->spans) {
      if (span.stream == Stream::compute) device_of_stage_.emplace(span.stage, span.device);
    }
    const std::vector<Span>& spans = trace_->spans;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      const Span& span = spans[i];
      // An overlapped pair: one enclosing event, its two parts nested under it in their colours.
      if (i > 0 && spans[i - 1].overlap_next) {
        const Span& first = spans[i - 1];
        emit(fmt::format(R"json({{"ph":"X","name":"({};{})","cat":"overlap","pid":{},"tid":{},"ts":{},"dur":{}}})json",
                         to_token({first.pass, first.microbatch, first.chunk}),
                         to_token({span.pass, span.microbatch, span.chunk}), pid(span.device), tid_[i],
                         ts(first.start), dur(first.start, span.end)));
      }
      const std::string token = to_token({span.pass, span.microbatch, span.chunk});
      const std::string name = span.stream == Stream::compute ? token : fmt::format("{} {}", stream_name(span.stream), token);
      std::string args = fmt::format(R"("pass":"{}","stage":{},"microbatch":{},"chunk":{},"step":{})",
                                     pass_name(span.pass), span.stage, span.microbatch, span.chunk, span.step);
      if (span.stream == Stream::send || span.stream == Stream::recv) args += transfer_args(span);
      emit(fmt::format(R"({{"ph":"X","name":"{}","cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{{}}}}})", name,
                       kPipelineCategory, pid(span.device), tid_[i], ts(span.start), dur(span.start, span.end), args));
      if (span.stream == Stream::compute && span.pass != Pass::W) producer_.emplace(output_of(span), i);
      if (span.stream == Stream::recv) recv_.emplace(output_of(span), i);
    }
  }

  // The peer device (where a sent output goes, where a received one came from) and the bytes.
  std::string transfer_args(const Span& span) const {
    const bool forward = span.pass == Pass::F;
    const int consumer_stage = forward ? span.stage + 1 : span.stage - 1;
    const int peer_stage = span.stream == Stream::send ? consumer_stage : span.stage;
    std::string args;
    if (const auto it = device_of_stage_.find(peer_stage); it != device_of_stage_.end()) {
      args += fmt::format(R"(,"{}":{})", span.stream == Stream::send ? "to_device" : "from_device", it->second);
    }
    args += fmt::format(R"(,"carries":"{}")", forward ? "activation" : "gradient");
    // The problem's activation bytes per microbatch: what crosses a boundary either way.
    if (problem_ && problem_->bytes_act > 0) args += fmt::format(R"(,"bytes":{})", problem_->bytes_act);
    return args;
  }

  // Per device a slice per step (its first compute start to its last compute end: a device
  // computes one step after the other, so these never overlap); per step end a global marker.
  void write_step_markers(const std::string& label) {
    std::map<std::pair<int, int>, std::pair<double, double>> extent;  // (device, step) -> (start, end)
    for (const Span& span : trace_->spans) {
      if (span.stream != Stream::compute) continue;
      const auto [it, inserted] = extent.try_emplace({span.device, span.step}, span.start, span.end);
      if (!inserted) {
        it->second.first = std::min(it->second.first, span.start);
        it->second.second = std::max(it->second.second, span.end);
      }
    }
    for (const auto& [key, range] : extent) {
      const auto [device, step] = key;
      emit(fmt::format(R"({{"ph":"X","name":"step {}","cat":"step","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"step":{}}}}})",
                       step, pid(device), steps_tid_[static_cast<std::size_t>(device)], ts(range.first),
                       dur(range.first, range.second), step));
    }
    for (std::size_t k = 0; k < trace_->step_ends.size(); ++k) {
      const std::string name = nlohmann::json(fmt::format("{}: step {} end", label, k)).dump();
      emit(fmt::format(R"({{"ph":"i","s":"g","name":{},"cat":"step","pid":{},"tid":0,"ts":{},"args":{{"step":{}}}}})",
                       name, pid(0), ts(trace_->step_ends[k]), k));
    }
  }

  // Flow arrows: each output that crosses devices, from its producer through the recv slice
  // where it arrives (when the engine recorded the transfer) to its consumer. Every point has its
  // slice's pid, tid, ts and category: bound for DevTools (equal fields) and Perfetto (the deepest
  // slice open at ts; the end binds to its enclosing slice, "bp":"e"). Not through the send as
  // well: it starts with the recv, and DevTools keeps one point per ts of a flow.
  void write_flows() {
    const std::vector<Span>& spans = trace_->spans;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      const Span& consumer = spans[i];
      if (consumer.stream != Stream::compute || consumer.pass == Pass::W) continue;
      const bool forward = consumer.pass == Pass::F;
      const OutputKey input{forward, forward ? consumer.stage - 1 : consumer.stage + 1, consumer.microbatch, consumer.step};
      const auto producer = producer_.find(input);
      if (producer == producer_.end() || spans[producer->second].device == consumer.device) continue;
      ++flow_id_;
      const std::string_view name = forward ? "activation" : "gradient";
      auto point = [&](char phase, std::size_t k) {
        emit(fmt::format(R"({{"ph":"{}",{}"id":{},"name":"{}","cat":"{}","pid":{},"tid":{},"ts":{}}})", phase,
                         phase == 'f' ? R"("bp":"e",)" : "", flow_id_, name, kPipelineCategory, pid(spans[k].device),
                         tid_[k], ts(spans[k].start)));
      };
      point('s', producer->second);
      if (const auto recv = recv_.find(input); recv != recv_.end()) point('t', recv->second);
      point('f', i);
    }
  }

  void write_memory() {
    const MemoryScale scale = memory_scale(trace_->meta, problem_);
    for (std::size_t d = 0; d < trace_->memory.size(); ++d) {
      for (const auto& point : trace_->memory[d]) {
        // Perfetto names the track "<name> <arg>": "activation memory (bytes)".
        emit(fmt::format(R"json({{"ph":"C","name":"activation memory","pid":{},"ts":{},"args":{{"({})":{}}}}})json",
                         pid(static_cast<int>(d)), ts(point.time), scale.unit, point.value / scale.divisor));
      }
    }
  }

  std::string& out_;
  bool& first_event_;
  long long& flow_id_;
  const Trace* trace_ = nullptr;
  int pid_base_ = 0;
  double us_ = 1;
  std::optional<Problem> problem_;
  std::vector<int> tid_;                    // per span
  std::vector<std::vector<Row>> rows_;      // per device, by tid
  std::vector<int> steps_tid_;              // per device
  std::map<int, int> device_of_stage_;
  std::map<OutputKey, std::size_t> producer_, recv_;  // span index by the output it makes or receives
};

}  // namespace

std::string to_chrome_trace(const std::vector<LabeledTrace>& traces) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first_event = true;
  long long flow_id = 0;
  int pid_base = 0;
  for (const auto& [label, trace] : traces) {
    TraceWriter(out, first_event, flow_id).write(label, *trace, pid_base);
    pid_base += trace->devices;
  }
  out += "\n]}\n";
  return out;
}

}  // namespace zb
