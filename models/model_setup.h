// The model-level fields of a scenario: model, hardware, cluster, microbatch size, split, MFU.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "models/hardware.h"
#include "models/interconnect.h"
#include "models/stage_split.h"
#include "models/transformer.h"

namespace zb::models {

// Scenario fields that describe the model instead of the problem's costs.
inline constexpr std::string_view kModelFields[] = {"model",       "hardware",     "cluster",
                                                    "microbatch_size", "seq_len",  "split",
                                                    "mfu",         "reserved_GB",  "bytes_per_param",
                                                    "flash_attention", "dp"};
bool is_model_field(std::string_view key);

struct ModelSetup {
  TransformerSpec model;
  std::string model_label;
  HardwareSpec hardware;
  std::string hardware_label;
  Interconnect interconnect;          // from the cluster when given, else from the hardware
  std::string cluster_label;          // empty when no cluster was given
  std::filesystem::path cluster_path; // the cluster file (for the SimGrid engine); empty if inline/none
  int microbatch_size = 1;            // sequences per microbatch (b)
  Split split;
  double mfu = 0.5;             // model-FLOPs utilisation: achieved / peak flop/s for every pass
  double bytes_per_param = 16;  // bf16 weight and gradient, fp32 master weight and two Adam moments
  bool flash_attention = false; // no s x s attention tensors kept
  // Data-parallel degree: dp copies of the pipeline, whose gradients are all-reduced every step
  // (t_dp_reduce, optimizer_cost.h); 1: none.
  int data_parallel = 1;
};

// Reads the model-level fields of a scenario object (other keys are left to the caller). "model"
// and "hardware" are required; presets resolve by name, or as paths against base_dir. Errors
// name `source` and the field.
ModelSetup model_setup_from_json(const nlohmann::json& scenario, std::string_view source,
                                 const std::filesystem::path& base_dir);

}  // namespace zb::models
