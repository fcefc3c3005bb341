// Where a measured row ran: the hardware preset of its GPU and the cluster of its nodes, built
// from its "interconnect" class (NVLink generation + NIC type x NICs per node) and its
// "nodes_gpus_per_node" (e.g. 48x8).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sim/app/validate/measured_csv.h"

namespace zb::validate {

struct RowMachine {
  std::string hardware;     // a preset name of models/hardware/
  nlohmann::json hardware_object;  // that preset as read
  std::string architecture;        // its "architecture" (what a calibration shares)
  nlohmann::json cluster;   // an inline cluster object (models/clusters/ format)
  std::string uncovered;    // why the row's machine cannot be described ("" when it can)
};

RowMachine row_machine(const MeasuredRow& row);

}  // namespace zb::validate
