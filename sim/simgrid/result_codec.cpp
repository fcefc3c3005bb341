// Flat little writer/reader pair; spans and memory points are copied field by field.
#include "sim/simgrid/detail/result_codec.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "sim/support/error.h"

namespace zb::engine {

namespace {

class Writer {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put_string(const std::string& text) {
    put<std::uint64_t>(text.size());
    out_ += text;
  }
  void put_doubles(const std::vector<double>& values) {
    put<std::uint64_t>(values.size());
    for (const double value : values) put(value);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  T get() {
    T value{};
    need(sizeof value);
    std::memcpy(&value, bytes_.data() + at_, sizeof value);
    at_ += sizeof value;
    return value;
  }
  std::size_t get_count(std::size_t item_bytes) {
    const auto count = get<std::uint64_t>();
    if (item_bytes > 0 && count > (bytes_.size() - at_) / item_bytes) corrupt();
    return static_cast<std::size_t>(count);
  }
  std::string get_string() {
    const std::size_t size = get_count(1);
    std::string text(bytes_.substr(at_, size));
    at_ += size;
    return text;
  }
  std::vector<double> get_doubles() {
    std::vector<double> values(get_count(sizeof(double)));
    for (double& value : values) value = get<double>();
    return values;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  void need(std::size_t size) const {
    if (bytes_.size() - at_ < size) corrupt();
  }
  [[noreturn]] static void corrupt() { throw Error("SimGrid engine: the simulation process sent a malformed result"); }

  std::string_view bytes_;
  std::size_t at_ = 0;
};

}  // namespace

std::string encode_result(const SimgridResult& result) {
  Writer out;
  const Trace& trace = result.trace;
  out.put_string(trace.meta.schedule);
  out.put_string(trace.meta.engine);
  out.put_string(std::string(time_unit_name(trace.meta.time_unit)));
  out.put_string(trace.meta.problem_json);
  out.put<std::int32_t>(trace.devices);
  out.put<std::uint64_t>(trace.spans.size());
  for (const Span& span : trace.spans) {
    out.put(span.device);
    out.put(static_cast<std::uint8_t>(span.stream));
    out.put(static_cast<std::uint8_t>(span.pass));
    out.put(span.stage);
    out.put(span.microbatch);
    out.put(span.chunk);
    out.put(span.start);
    out.put(span.end);
    out.put(static_cast<std::uint8_t>(span.overlap_next));
    out.put(span.step);
  }
  out.put<std::uint64_t>(trace.memory.size());
  for (const auto& timeline : trace.memory) {
    out.put<std::uint64_t>(timeline.size());
    for (const MemoryPoint& point : timeline) {
      out.put(point.time);
      out.put(point.value);
    }
  }
  out.put_doubles(trace.step_ends);
  out.put_doubles(result.step.gradients_ready);
  out.put_doubles(result.step.verdict);
  out.put_doubles(result.step.ready);
  out.put(result.engine_cpu_seconds);
  out.put(result.sim_activities);
  return out.take();
}

SimgridResult decode_result(std::string_view bytes) {
  Reader in(bytes);
  SimgridResult result;
  Trace& trace = result.trace;
  trace.meta.schedule = in.get_string();
  trace.meta.engine = in.get_string();
  trace.meta.time_unit = parse_time_unit(in.get_string(), "SimGrid result");
  trace.meta.problem_json = in.get_string();
  trace.devices = in.get<std::int32_t>();
  constexpr std::size_t kSpanBytes = 4 + 1 + 1 + 4 + 4 + 4 + 8 + 8 + 1 + 4;
  trace.spans.resize(in.get_count(kSpanBytes));
  for (Span& span : trace.spans) {
    span.device = in.get<std::int32_t>();
    span.stream = static_cast<Stream>(in.get<std::uint8_t>());
    span.pass = static_cast<Pass>(in.get<std::uint8_t>());
    span.stage = in.get<std::int32_t>();
    span.microbatch = in.get<std::int32_t>();
    span.chunk = in.get<std::int32_t>();
    span.start = in.get<double>();
    span.end = in.get<double>();
    span.overlap_next = in.get<std::uint8_t>() != 0;
    span.step = in.get<std::int32_t>();
  }
  trace.memory.resize(in.get_count(sizeof(std::uint64_t)));
  for (auto& timeline : trace.memory) {
    timeline.resize(in.get_count(2 * sizeof(double)));
    for (MemoryPoint& point : timeline) {
      point.time = in.get<double>();
      point.value = in.get<double>();
    }
  }
  trace.step_ends = in.get_doubles();
  result.step.gradients_ready = in.get_doubles();
  result.step.verdict = in.get_doubles();
  result.step.ready = in.get_doubles();
  result.engine_cpu_seconds = in.get<double>();
  result.sim_activities = in.get<double>();
  if (!in.done()) throw Error("SimGrid engine: the simulation process sent trailing bytes");
  return result;
}

}  // namespace zb::engine
