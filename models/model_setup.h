// The model-level fields of a scenario: model, hardware, cluster, microbatch size, split, MFU.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "models/hardware.h"
#include "models/interconnect.h"
#include "models/parallelism.h"
#include "models/precision.h"
#include "models/presets.h"
#include "models/stage_split.h"
#include "models/transformer.h"

namespace zb::models {

// Scenario fields that describe the model instead of the problem's costs.
inline constexpr std::string_view kModelFields[] = {
    "model",           "hardware",          "cluster",       "microbatch_size", "seq_len",
    "split",           "mfu",               "reserved_GB",   "bytes_per_param", "flash_attention",
    "tensor_parallel", "sequence_parallel", "data_parallel", "sharding",        "recompute",
    "cost_model",      "precision",         "context_parallel", "tp_comm_overlap", "expert_parallel",
    "moe_imbalance", "recompute_modules"};
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
  // Given: every pass takes its flops / (peak x mfu), the flat model of earlier versions. Not
  // given: each kernel is costed by its kind (models/detail/kernel_time.h).
  std::optional<double> mfu;
  // bf16 weight (2) and gradient (2); the rest (12: fp32 master weight and two Adam moments) is
  // optimizer state (models/static_memory.h).
  double bytes_per_param = 16;
  Parallelism parallel;
  bool flash_attention = false; // no s x s attention tensors kept
  Precision precision = Precision::bf16;
};

// Reads the model-level fields of a scenario object (other keys are left to the caller). "model"
// and "hardware" are required; "cost_model" is "calibrated" (the default: the hardware preset's
// fitted efficiencies, models/hardware.h) or "roofline"; presets resolve by name, or as paths against base_dir, and are
// read with `read`. Errors name `source` and the field; a tensor-parallel degree must divide the
// heads, key/value heads and MLP width, and the GPUs of a node.
// The setup of a MoE model's leading dense layers (TransformerSpec::moe_dense_layers): the same
// GPUs, the model without experts.
ModelSetup dense_layer_setup(const ModelSetup& setup);

ModelSetup model_setup_from_json(const nlohmann::json& scenario, std::string_view source,
                                 const std::filesystem::path& base_dir, const ReadJsonFile& read);

}  // namespace zb::models
