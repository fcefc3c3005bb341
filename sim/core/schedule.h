// A schedule: for every device, the ordered list of actions it runs; text and JSON forms.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/action.h"
#include "sim/core/problem.h"

namespace zb {

struct Schedule {
  std::string name;                          // generator or file it came from
  std::vector<std::vector<Action>> devices;  // devices[d] = actions of device d, in order
  // What the schedule was made for, when its maker said so (generators always do; files do when
  // they carry it). Actions name chunks, not stages, so the same lists mean different schedules
  // under different placements: the validator refuses a problem that disagrees.
  std::optional<Placement> placement;
  std::optional<int> chunks;

  // `name` with `devices` empty lists, for generators to fill.
  static Schedule empty(std::string name, int devices);

  int device_count() const { return static_cast<int>(devices.size()); }
  std::size_t action_count() const;
  // The stated chunk count, else the largest chunk index + 1.
  int chunk_count() const;
  // The largest microbatch index + 1.
  int microbatch_count() const;
};

// Whether any device offloads or reloads (Pass::O, Pass::L).
bool has_copies(const Schedule& schedule);

// Text form: optional header lines "placement: vshape" and "chunks: 2", then one line per
// device, "d0: F0 F1 B0 W0 ...", an overlapped pair written "(F7;BW3.1)". Comment lines start
// with '#'.
std::string to_text(const Schedule& schedule);
Schedule parse_schedule_text(std::string_view text, std::string_view source);

// JSON form: {"schedule": name, "placement": "vshape", "chunks": 2, "devices": [["F0", ...], ...]}
// (placement and chunks optional; the tokens as in the text form, "(F7;BW3.1)" included).
nlohmann::json to_json(const Schedule& schedule);
Schedule schedule_from_json(const nlohmann::json& object, std::string_view source);

}  // namespace zb
