// Schedule text form ("d0: F0 F1 B0 W0") and JSON form.
#include "sim/core/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "sim/support/error.h"
#include "sim/support/text_trim.h"

namespace zb {

Schedule Schedule::empty(std::string name, int devices) {
  Schedule schedule;
  schedule.name = std::move(name);
  schedule.devices.resize(static_cast<std::size_t>(devices));
  return schedule;
}

bool has_copies(const Schedule& schedule) {
  return std::any_of(schedule.devices.begin(), schedule.devices.end(), [](const std::vector<Action>& actions) {
    return std::any_of(actions.begin(), actions.end(), [](const Action& action) { return is_copy(action.pass); });
  });
}

std::size_t Schedule::action_count() const {
  std::size_t n = 0;
  for (const auto& list : devices) n += list.size();
  return n;
}

int Schedule::chunk_count() const {
  if (chunks) return *chunks;
  int count = 1;
  for (const auto& list : devices) {
    for (const Action& action : list) count = std::max(count, action.chunk + 1);
  }
  return count;
}

int Schedule::microbatch_count() const {
  int count = 0;
  for (const auto& list : devices) {
    for (const Action& action : list) count = std::max(count, action.microbatch + 1);
  }
  return count;
}

std::string to_text(const Schedule& schedule) {
  std::string out;
  if (schedule.placement) out += fmt::format("placement: {}\n", placement_name(*schedule.placement));
  if (schedule.chunks) out += fmt::format("chunks: {}\n", *schedule.chunks);
  for (int d = 0; d < schedule.device_count(); ++d) {
    out += fmt::format("d{}:", d);
    for (const std::string& token : to_tokens(schedule.devices[d])) {
      out += ' ';
      out += token;
    }
    out += '\n';
  }
  return out;
}

namespace {

int parse_chunks(std::string_view text, std::string_view where) {
  int chunks = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), chunks);
  if (ec != std::errc{} || ptr != text.data() + text.size() || chunks < 1) {
    throw InputError(fmt::format("{}: chunks '{}': expected a whole number >= 1", where, text));
  }
  return chunks;
}

// A header line ("placement: vshape", "chunks: 2"); false for anything else. Headers come first.
bool read_header(Schedule& schedule, std::string_view key, std::string_view value, std::string_view where) {
  if (key != "placement" && key != "chunks") return false;
  if (!schedule.devices.empty()) {
    throw InputError(fmt::format("{}: header line '{}: {}' after the device lines (headers come first)", where, key,
                                 value));
  }
  if (key == "placement") {
    if (schedule.placement) throw InputError(fmt::format("{}: placement given twice", where));
    schedule.placement = parse_placement(value, fmt::format("{}: placement", where));
  } else {
    if (schedule.chunks) throw InputError(fmt::format("{}: chunks given twice", where));
    schedule.chunks = parse_chunks(value, where);
  }
  return true;
}

}  // namespace

Schedule parse_schedule_text(std::string_view text, std::string_view source) {
  Schedule schedule;
  schedule.name = std::string(source);
  std::size_t line_start = 0;
  int line_number = 0;
  while (line_start <= text.size()) {
    const auto line_end = text.find('\n', line_start);
    std::string_view line =
        text.substr(line_start, line_end == std::string_view::npos ? std::string_view::npos : line_end - line_start);
    ++line_number;
    line_start = line_end == std::string_view::npos ? text.size() + 1 : line_end + 1;
    line = trim_blanks(line);
    if (line.empty() || line.front() == '#') continue;
    const std::string where = fmt::format("{}:{}", source, line_number);
    const auto colon = line.find(':');
    if (colon != std::string_view::npos && read_header(schedule, line.substr(0, colon), trim_blanks(line.substr(colon + 1)),
                                                       where)) {
      continue;
    }
    int device = -1;
    if (line.front() == 'd' && colon != std::string_view::npos) {
      const std::string_view digits = line.substr(1, colon - 1);
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), device);
      if (ec != std::errc{} || ptr != digits.data() + digits.size()) device = -1;
    }
    if (device < 0) {
      throw InputError(fmt::format("{}: expected a line like 'd0: F0 F1 B0 W0' (or a header line 'placement: "
                                   "vshape' or 'chunks: 2' before them), got '{}'",
                                   where, excerpt(line)));
    }
    if (device != schedule.device_count()) {
      throw InputError(fmt::format("{}: device d{} out of order: expected d{} (devices are listed "
                                   "0, 1, 2, ... once each)",
                                   where, device, schedule.device_count()));
    }
    auto& actions = schedule.devices.emplace_back();
    std::string_view rest = line.substr(colon + 1);
    while (true) {
      rest = trim_blanks(rest);
      if (rest.empty()) break;
      const auto space = rest.find_first_of(" \t");
      append_token(actions, rest.substr(0, space), where);
      if (space == std::string_view::npos) break;
      rest.remove_prefix(space);
    }
  }
  if (schedule.devices.empty()) {
    throw InputError(fmt::format("{}: no device lines found (expected lines like 'd0: F0 F1 B0 W0')", source));
  }
  return schedule;
}

nlohmann::json to_json(const Schedule& schedule) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& list : schedule.devices) {
    nlohmann::json tokens = nlohmann::json::array();
    for (const std::string& token : to_tokens(list)) tokens.push_back(token);
    devices.push_back(std::move(tokens));
  }
  nlohmann::json out = {{"schedule", schedule.name}};
  if (schedule.placement) out["placement"] = placement_name(*schedule.placement);
  if (schedule.chunks) out["chunks"] = *schedule.chunks;
  out["devices"] = std::move(devices);
  return out;
}

Schedule schedule_from_json(const nlohmann::json& object, std::string_view source) {
  if (!object.is_object() || !object.contains("devices") || !object["devices"].is_array()) {
    throw InputError(fmt::format("{}: expected an object with a 'devices' array of token arrays", source));
  }
  Schedule schedule;
  if (object.contains("schedule")) {
    if (!object["schedule"].is_string()) throw InputError(fmt::format("{}: field 'schedule' must be a string", source));
    schedule.name = object["schedule"].get<std::string>();
  }
  for (const auto& [key, value] : object.items()) {
    if (key == "placement") {
      if (!value.is_string()) throw InputError(fmt::format("{}: field 'placement' must be a string such as \"vshape\"", source));
      schedule.placement = parse_placement(value.get<std::string>(), fmt::format("{}: field 'placement'", source));
    } else if (key == "chunks") {
      if (!value.is_number_integer() || value.get<long long>() < 1 || value.get<long long>() > 1'000'000) {
        throw InputError(fmt::format("{}: field 'chunks' is {}: expected a whole number >= 1", source, value.dump()));
      }
      schedule.chunks = value.get<int>();
    } else if (key != "schedule" && key != "devices") {
      throw InputError(fmt::format("{}: unknown field '{}' (known: schedule, placement, chunks, devices)", source, key));
    }
  }
  int d = 0;
  for (const auto& list : object["devices"]) {
    const std::string where = fmt::format("{}: devices[{}]", source, d++);
    if (!list.is_array()) throw InputError(where + " must be an array of tokens like \"F0\"");
    auto& actions = schedule.devices.emplace_back();
    for (const auto& token : list) {
      if (!token.is_string()) throw InputError(fmt::format("{}: {} is not a token string", where, token.dump()));
      append_token(actions, token.get<std::string>(), where);
    }
  }
  return schedule;
}

}  // namespace zb
