// Schedule files by content, and the shape they imply (see schedule_files.h).
#include "sim/app/catalog/schedule_files.h"

#include <fmt/format.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/core/limits.h"
#include "sim/formats/pytorch_csv.h"
#include "sim/support/json_text.h"

namespace zb::catalog {

namespace {

enum class Format { text, json, pytorch_csv };

// The first line that is neither blank nor a comment, trimmed on the left.
std::string_view first_content_line(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    const auto first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] != '#') return line.substr(first);
    start = end + 1;
  }
  return {};
}

Format format_of(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return Format::json;
  const std::string_view line = first_content_line(text);
  // PyTorch cells start with the stage number ("0F0"), a composite "(...)", or are empty (",1F0").
  if (!line.empty() && (std::isdigit(static_cast<unsigned char>(line.front())) || line.front() == '(' ||
                        line.front() == ',')) {
    return Format::pytorch_csv;
  }
  return Format::text;
}

}  // namespace

Schedule parse_schedule_file(std::string_view text, const std::string& source, std::string* note) {
  if (note) note->clear();
  switch (format_of(text)) {
    case Format::json: {
      Schedule schedule = schedule_from_json(parse_json(text, source), source);
      if (schedule.name.empty()) schedule.name = source;
      return schedule;
    }
    case Format::pytorch_csv: {
      ImportedSchedule imported = parse_pytorch_csv(text, source);
      if (note) *note = describe_comms(imported);
      return std::move(imported.schedule);
    }
    case Format::text: break;
  }
  return parse_schedule_text(text, source);
}

Schedule read_schedule_file(const std::string& path, std::string* note) {
  return parse_schedule_file(read_file(path), path, note);
}

void apply_schedule_shape(const Schedule& schedule, ProblemSpec& spec, std::string_view source) {
  auto take = [&](int& field, int value, const char* name, int open_value) {
    if (field == 0 || field == open_value) {
      field = value;
    } else if (field != value) {
      throw InputError(fmt::format("{}: the schedule has {}={} but the problem says {}", source, name, value, field));
    }
  };
  if (schedule.device_count() == 0) throw InputError(fmt::format("{}: the schedule has no devices", source));
  if (schedule.microbatch_count() == 0) throw InputError(fmt::format("{}: the schedule has no actions", source));
  check_action_count(schedule.device_count(), schedule.chunk_count(), schedule.microbatch_count(), source);
  take(spec.devices, schedule.device_count(), "p", 0);
  take(spec.microbatches, schedule.microbatch_count(), "m", 0);
  take(spec.chunks, schedule.chunk_count(), "chunks", 1);
  if (schedule.placement) {
    if (spec.placement && *spec.placement != *schedule.placement) {
      throw InputError(fmt::format("{}: the schedule says placement {} but the problem says placement {} (drop "
                                   "--placement, or use a schedule made for it)",
                                   source, placement_name(*schedule.placement), placement_name(*spec.placement)));
    }
    spec.placement = schedule.placement;
  }
}

Schedule load_schedule_file(const std::string& path, ProblemSpec& spec, std::string* note) {
  Schedule schedule = read_schedule_file(path, note);
  apply_schedule_shape(schedule, spec, path);
  return schedule;
}

}  // namespace zb::catalog
