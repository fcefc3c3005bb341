// Our trace file format, written by every engine and read back by the viewer and tests.
#include "sim/formats/trace_json.h"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "sim/support/error.h"
#include "sim/core/limits.h"

namespace zb {

using nlohmann::json;

namespace {

Pass parse_pass(std::string_view text, std::string_view context) {
  if (const auto pass = pass_from_name(text)) return *pass;
  throw InputError(fmt::format("{}: unknown kind '{}' (expected F, B, W, BW, O or L)", context, text));
}

const json& field(const json& object, const char* name, std::string_view context) {
  if (!object.is_object() || !object.contains(name)) {
    throw InputError(fmt::format("{}: missing field '{}'", context, name));
  }
  return object.at(name);
}

double number(const json& object, const char* name, std::string_view context) {
  const json& value = field(object, name, context);
  if (!value.is_number()) throw InputError(fmt::format("{}: field '{}' is {}: expected a number", context, name, value.dump()));
  return value.get<double>();
}

int integer(const json& object, const char* name, std::string_view context) {
  const json& value = field(object, name, context);
  // Range-checked before the narrowing to int: 4294967296 would otherwise read as 0.
  if (!value.is_number_integer() || value.get<double>() < std::numeric_limits<int>::min() ||
      value.get<double>() > std::numeric_limits<int>::max()) {
    throw InputError(fmt::format("{}: field '{}' is {}: expected an integer", context, name, value.dump()));
  }
  return value.get<int>();
}

std::string text(const json& object, const char* name, std::string_view context) {
  const json& value = field(object, name, context);
  if (!value.is_string()) throw InputError(fmt::format("{}: field '{}' is {}: expected a string", context, name, value.dump()));
  return value.get<std::string>();
}

}  // namespace

json to_json(const Metrics& metrics) {
  return {{"makespan", metrics.makespan},       {"span", metrics.span},
          {"work", metrics.work},               {"bubble_rate", metrics.bubble_rate},
          {"device_span", metrics.device_span}, {"busy", metrics.busy},
          {"idle", metrics.idle},               {"peak_memory", metrics.peak_memory}};
}

json to_json(const Trace& trace) {
  json meta = {{"schedule", trace.meta.schedule}, {"engine", trace.meta.engine}, {"time_unit", time_unit_name(trace.meta.time_unit)}};
  if (!trace.meta.problem_json.empty()) meta["problem"] = json::parse(trace.meta.problem_json);
  if (!trace.meta.memory_unit.empty()) meta["memory_unit"] = trace.meta.memory_unit;
  json spans = json::array();
  for (const Span& s : trace.spans) {
    json item = {{"device", s.device},         {"stream", stream_name(s.stream)}, {"kind", pass_name(s.pass)},
                 {"stage", s.stage},           {"microbatch", s.microbatch},      {"chunk", s.chunk},
                 {"start", s.start},           {"end", s.end}};
    if (s.overlap_next) item["overlap_next"] = true;  // only on the first part of an overlapped pair
    if (s.step != 0) item["step"] = s.step;           // traces of several steps
    spans.push_back(std::move(item));
  }
  json memory = json::array();
  for (std::size_t d = 0; d < trace.memory.size(); ++d) {
    json points = json::array();
    for (const auto& point : trace.memory[d]) points.push_back({point.time, point.value});
    memory.push_back({{"device", d}, {"points", std::move(points)}});
  }
  json out = {{"meta", std::move(meta)},
              {"devices", trace.devices},
              {"spans", std::move(spans)},
              {"memory", std::move(memory)},
              {"metrics", to_json(trace.metrics)}};
  if (trace.step_ends.size() > 1) out["step_ends"] = trace.step_ends;  // a trace of several steps
  return out;
}

Trace trace_from_json(const json& object, std::string_view source) {
  if (!object.is_object()) throw InputError(fmt::format("{}: a trace must be a JSON object", source));
  Trace trace;
  trace.devices = integer(object, "devices", source);
  if (trace.devices < 1) throw InputError(fmt::format("{}: field 'devices' is {}: need at least 1", source, trace.devices));
  // Every device runs at least an F, a B and a W: more devices than that would be a schedule over
  // the action limit (and the per-device arrays below would be allocated for nothing).
  if (trace.devices > kMaxActions / 3) {
    throw InputError(fmt::format("{}: field 'devices' is {}: over the limit of {:.0f} (the action limit / 3)", source,
                                 trace.devices, kMaxActions / 3));
  }
  if (object.contains("meta")) {
    const json& meta = object.at("meta");
    const std::string context = fmt::format("{}: meta", source);
    if (!meta.is_object()) throw InputError(fmt::format("{} is {}: expected an object", context, excerpt(meta.dump())));
    if (meta.contains("schedule")) trace.meta.schedule = text(meta, "schedule", context);
    if (meta.contains("engine")) trace.meta.engine = text(meta, "engine", context);
    if (meta.contains("time_unit")) trace.meta.time_unit = parse_time_unit(text(meta, "time_unit", context), context + ": field 'time_unit'");
    if (meta.contains("problem")) trace.meta.problem_json = meta.at("problem").dump();
    if (meta.contains("memory_unit")) trace.meta.memory_unit = text(meta, "memory_unit", context);
  }
  const json& spans = field(object, "spans", source);
  if (!spans.is_array()) throw InputError(fmt::format("{}: field 'spans' must be an array", source));
  trace.spans.reserve(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const std::string context = fmt::format("{}: spans[{}]", source, i);
    const json& s = spans[i];
    Span span;
    span.device = integer(s, "device", context);
    span.stream = s.contains("stream") ? parse_stream(text(s, "stream", context), context) : Stream::compute;
    span.pass = parse_pass(text(s, "kind", context), context);
    span.stage = integer(s, "stage", context);
    span.microbatch = integer(s, "microbatch", context);
    span.chunk = s.contains("chunk") ? integer(s, "chunk", context) : 0;
    span.start = number(s, "start", context);
    span.end = number(s, "end", context);
    if (s.contains("overlap_next")) {
      if (!s.at("overlap_next").is_boolean()) {
        throw InputError(fmt::format("{}: field 'overlap_next' is {}: expected true or false", context,
                                     s.at("overlap_next").dump()));
      }
      span.overlap_next = s.at("overlap_next").get<bool>();
    }
    if (s.contains("step")) {
      span.step = integer(s, "step", context);
      if (span.step < 0) throw InputError(fmt::format("{}: field 'step' is {}: expected >= 0", context, span.step));
    }
    if (span.device < 0 || span.device >= trace.devices) {
      throw InputError(fmt::format("{}: device {} is outside 0..{}", context, span.device, trace.devices - 1));
    }
    if (!(span.end >= span.start)) {
      throw InputError(fmt::format("{}: end {} is before start {}", context, span.end, span.start));
    }
    trace.spans.push_back(span);
  }
  trace.memory.assign(trace.devices, {});
  if (object.contains("memory")) {
    const json& memory = object.at("memory");
    if (!memory.is_array()) throw InputError(fmt::format("{}: field 'memory' must be an array", source));
    for (std::size_t i = 0; i < memory.size(); ++i) {
      const std::string context = fmt::format("{}: memory[{}]", source, i);
      const int device = integer(memory[i], "device", context);
      if (device < 0 || device >= trace.devices) {
        throw InputError(fmt::format("{}: device {} is outside 0..{}", context, device, trace.devices - 1));
      }
      const json& points = field(memory[i], "points", context);
      if (!points.is_array()) throw InputError(fmt::format("{}: field 'points' must be an array", context));
      for (const auto& point : points) {
        if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_number()) {
          throw InputError(fmt::format("{}: point {} must be [time, value]", context, point.dump()));
        }
        trace.memory[device].push_back({point[0].get<double>(), point[1].get<double>()});
      }
    }
  }
  if (object.contains("step_ends")) {
    const json& ends = object.at("step_ends");
    if (!ends.is_array()) throw InputError(fmt::format("{}: field 'step_ends' must be an array of times", source));
    for (const auto& end : ends) {
      if (!end.is_number()) throw InputError(fmt::format("{}: field 'step_ends' has {}: expected times", source, end.dump()));
      trace.step_ends.push_back(end.get<double>());
    }
  }
  double work = 0;
  if (object.contains("metrics") && object.at("metrics").contains("work")) {
    work = number(object.at("metrics"), "work", fmt::format("{}: metrics", source));
  }
  // Metrics are recomputed from the spans so a file's numbers always agree with what is drawn.
  trace.metrics = compute_metrics(trace, work);
  return trace;
}

}  // namespace zb
