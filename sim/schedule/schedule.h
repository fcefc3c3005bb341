// A schedule: for every device, the ordered list of actions it runs; text and JSON forms.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "action.h"

namespace zb {

struct Schedule {
  std::string name;                          // generator or file it came from
  std::vector<std::vector<Action>> devices;  // devices[d] = actions of device d, in order

  int device_count() const { return static_cast<int>(devices.size()); }
  std::size_t action_count() const;
};

// Text form: one line per device, "d0: F0 F1 B0 W0 ...". Comment lines start with '#'.
std::string to_text(const Schedule& schedule);
Schedule parse_schedule_text(std::string_view text, std::string_view source);

// JSON form: {"schedule": name, "devices": [["F0", "F1", ...], ...]}.
nlohmann::json to_json(const Schedule& schedule);
Schedule schedule_from_json(const nlohmann::json& object, std::string_view source);

}  // namespace zb
