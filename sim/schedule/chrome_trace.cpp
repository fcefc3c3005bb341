// Chrome trace event JSON (Perfetto, chrome://tracing): processes per device, threads per stream.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <unordered_map>

#include "sim/schedule/time_units.h"
#include "sim/schedule/trace_writers.h"

namespace zb {

namespace {

// Key of a compute span by what it produces: (forward or backward, stage, microbatch).
// Stages and steps fit in 31 and 8 bits here; a trace of more steps than that repeats keys only
// for its arrows, never its spans.
std::uint64_t producer_key(bool forward, int stage, int microbatch, int step) {
  return (static_cast<std::uint64_t>(forward) << 63) | (static_cast<std::uint64_t>(stage & 0x7fffff) << 40) |
         (static_cast<std::uint64_t>(step & 0xff) << 32) | static_cast<std::uint32_t>(microbatch);
}

}  // namespace

std::string to_chrome_trace(const std::vector<LabeledTrace>& traces) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first_event = true;
  auto emit = [&](const std::string& event) {
    if (!first_event) out += ",\n";
    first_event = false;
    out += event;
  };
  int pid_base = 0;
  long long flow_id = 0;
  for (const auto& [label, trace] : traces) {
    const double us = microseconds_per(trace->meta.time_unit);
    for (int d = 0; d < trace->devices; ++d) {
      const int pid = pid_base + d;
      const std::string name = nlohmann::json(fmt::format("{} d{}", label, d)).dump();
      emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":{}}}}})", pid, name));
      emit(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"args":{{"sort_index":{}}}}})", pid, pid));
      for (int tid = 0; tid < 3; ++tid) {
        emit(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}"}}}})", pid, tid,
                         stream_name(static_cast<Stream>(tid))));
      }
    }
    std::unordered_map<std::uint64_t, const Span*> compute_by_output;
    const std::vector<Span>& spans = trace->spans;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      const Span& span = spans[i];
      const int pid = pid_base + span.device;
      // An overlapped pair: one enclosing event, its two parts nested under it in their colours.
      if (i > 0 && spans[i - 1].overlap_next) {
        const Span& first = spans[i - 1];
        emit(fmt::format(R"json({{"ph":"X","name":"({};{})","cat":"overlap","pid":{},"tid":0,"ts":{},"dur":{}}})json",
                         to_token({first.pass, first.microbatch, first.chunk}),
                         to_token({span.pass, span.microbatch, span.chunk}), pid, first.start * us,
                         (span.end - first.start) * us));
      }
      const std::string token = to_token({span.pass, span.microbatch, span.chunk});
      const std::string name = span.stream == Stream::compute ? token : fmt::format("{} {}", stream_name(span.stream), token);
      const std::string step = span.step != 0 ? fmt::format(R"(,"step":{})", span.step) : std::string();
      emit(fmt::format(
          R"({{"ph":"X","name":"{}","cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"stage":{},"microbatch":{},"chunk":{}{}}}}})",
          name, pass_name(span.pass), pid, static_cast<int>(span.stream), span.start * us, span.duration() * us,
          span.stage, span.microbatch, span.chunk, step));
      if (span.stream == Stream::compute && span.pass != Pass::W) {
        compute_by_output[producer_key(span.pass == Pass::F, span.stage, span.microbatch, span.step)] = &span;
      }
    }
    // Flow arrows: each compute span to the span on another device that consumes its output.
    for (const Span& span : trace->spans) {
      if (span.stream != Stream::compute || span.pass == Pass::W) continue;
      const bool forward = span.pass == Pass::F;
      const int input_stage = forward ? span.stage - 1 : span.stage + 1;
      const auto it = compute_by_output.find(producer_key(forward, input_stage, span.microbatch, span.step));
      if (it == compute_by_output.end() || it->second->device == span.device) continue;
      const Span& producer = *it->second;
      ++flow_id;
      emit(fmt::format(R"({{"ph":"s","id":{},"name":"{}","cat":"transfer","pid":{},"tid":0,"ts":{}}})", flow_id,
                       forward ? "activation" : "gradient", pid_base + producer.device, producer.start * us));
      emit(fmt::format(R"({{"ph":"f","bp":"e","id":{},"name":"{}","cat":"transfer","pid":{},"tid":0,"ts":{}}})",
                       flow_id, forward ? "activation" : "gradient", pid_base + span.device, span.start * us));
    }
    for (std::size_t d = 0; d < trace->memory.size(); ++d) {
      for (const auto& point : trace->memory[d]) {
        emit(fmt::format(R"({{"ph":"C","name":"activation memory","pid":{},"ts":{},"args":{{"memory":{}}}}})",
                         pid_base + static_cast<int>(d), point.time * us, point.value));
      }
    }
    pid_base += trace->devices;
  }
  out += "\n]}\n";
  return out;
}

}  // namespace zb
