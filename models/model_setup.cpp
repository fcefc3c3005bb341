// Reading the model-level fields of a scenario into a ModelSetup.
#include "models/model_setup.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/errors.h"
#include "models/detail/json_fields.h"
#include "models/presets.h"

namespace zb::models {

bool is_model_field(std::string_view key) {
  for (const auto field : kModelFields) {
    if (field == key) return true;
  }
  return false;
}

ModelSetup model_setup_from_json(const nlohmann::json& scenario, std::string_view source,
                                 const std::filesystem::path& base_dir, const ReadJsonFile& read) {
  ModelSetup setup;
  if (!scenario.contains("model")) throw InputError(fmt::format("{}: missing field 'model'", source));
  if (!scenario.contains("hardware")) {
    throw InputError(fmt::format("{}: missing field 'hardware' (a model-driven scenario needs one, e.g. \"a100-80gb\")",
                                 source));
  }
  const PresetRef model =
      resolve_preset("transformers", scenario["model"], base_dir, fmt::format("{}: field 'model'", source), read);
  setup.model = transformer_from_json(
      model.object, model.path.empty() ? fmt::format("{}: field 'model'", source) : model.path.string());
  setup.model_label = model.label;

  const PresetRef hardware =
      resolve_preset("hardware", scenario["hardware"], base_dir, fmt::format("{}: field 'hardware'", source), read);
  const std::string cost_model_text = string_field_or(scenario, "cost_model", source, "calibrated");
  const std::optional<CostModel> cost_model = cost_model_from_name(cost_model_text);
  if (!cost_model) {
    throw InputError(fmt::format("{}: field 'cost_model' is \"{}\": expected calibrated or roofline", source,
                                 excerpt(cost_model_text)));
  }
  setup.hardware = hardware_from_json(
      hardware.object, hardware.path.empty() ? fmt::format("{}: field 'hardware'", source) : hardware.path.string(),
      hardware.path.empty() ? base_dir : hardware.path.parent_path(), read,
      *cost_model,
      hardware.path.parent_path() == presets_dir() / "hardware" ? hardware.path.stem().string() : "");
  setup.hardware_label = hardware.label;

  if (scenario.contains("cluster") && !scenario["cluster"].is_null()) {
    const PresetRef cluster =
        resolve_preset("clusters", scenario["cluster"], base_dir, fmt::format("{}: field 'cluster'", source), read);
    setup.interconnect = interconnect_from_cluster(
        cluster.object, cluster.path.empty() ? fmt::format("{}: field 'cluster'", source) : cluster.path.string());
    setup.cluster_label = cluster.label;
    setup.cluster_path = cluster.path;
  } else {
    setup.interconnect = interconnect_from_hardware(setup.hardware);
  }

  setup.microbatch_size = int_field_or(scenario, "microbatch_size", source, 1, 1);
  setup.model.seq_len = int_field_or(scenario, "seq_len", source, 1, setup.model.seq_len);
  if (scenario.contains("split")) setup.split = split_from_json(scenario["split"], source);
  if (scenario.contains("mfu")) setup.mfu = fraction_field_or(scenario, "mfu", source, 1);
  setup.hardware.reserved_GB = number_field_or(scenario, "reserved_GB", source, 0, setup.hardware.reserved_GB);
  setup.bytes_per_param = number_field_or(scenario, "bytes_per_param", source, 0, 16);
  setup.flash_attention = bool_field_or(scenario, "flash_attention", source, false);
  setup.parallel = parallelism_from_json(scenario, source);
  setup.precision = precision_from_json(scenario, source);
  const int c = setup.parallel.context;
  if (c > 1 && setup.model.seq_len % (2 * c) != 0) {
    throw InputError(fmt::format("{}: field 'context_parallel' is {}: the sequence ({}) must split into 2 x {} equal "
                                 "chunks (each GPU takes one from each end, to balance the causal mask)",
                                 source, c, setup.model.seq_len, c));
  }
  if (setup.precision != Precision::bf16 && setup.hardware.peak_tflops_fp8 <= 0) {
    throw InputError(fmt::format("{}: field 'precision' is \"{}\", but {} has no FP8 tensor cores (no peak_tflops_fp8)",
                                 source, precision_name(setup.precision), setup.hardware_label));
  }
  const int t = setup.parallel.tensor;
  for (const auto& [what, count] : {std::pair{"heads", setup.model.heads}, std::pair{"kv_heads", setup.model.kv_heads},
                                    std::pair{"ffn_hidden", setup.model.ffn_hidden}}) {
    if (count % t != 0) {
      throw InputError(fmt::format("{}: field 'tensor_parallel' is {}: it must divide the model's {} ({})", source, t,
                                   what, count));
    }
  }
  const int e = setup.parallel.expert;
  if (e > 1 && !setup.model.moe()) {
    throw InputError(fmt::format("{}: field 'expert_parallel' is {}, but the model has no experts", source, e));
  }
  if (setup.parallel.moe_imbalance != 1 && !setup.model.moe()) {
    throw InputError(fmt::format("{}: field 'moe_imbalance' is {}, but the model has no experts", source,
                                 setup.parallel.moe_imbalance));
  }
  if (setup.model.moe() && setup.model.moe_experts % e != 0) {
    throw InputError(fmt::format("{}: field 'expert_parallel' is {}: it must divide the model's moe_experts ({})",
                                 source, e, setup.model.moe_experts));
  }
  if (setup.parallel.gpus_per_device() % e != 0) {
    throw InputError(fmt::format("{}: field 'expert_parallel' is {}: it must divide the GPUs of one stage, tensor x "
                                 "context x data parallel ({})",
                                 source, e, setup.parallel.gpus_per_device()));
  }
  if (setup.model.moe() && t > 1 && !setup.parallel.sequence_parallel) {
    // Megatron's MoE layers take the sequence-parallel shard of the tokens each GPU routes.
    throw InputError(fmt::format("{}: field 'tensor_parallel' is {} on a mixture-of-experts model: it needs "
                                 "\"sequence_parallel\": true",
                                 source, t));
  }
  if (setup.interconnect.gpus_per_node % t != 0) {
    throw InputError(fmt::format("{}: field 'tensor_parallel' is {}: its GPUs must share a node's links, so it must "
                                 "divide the GPUs per node ({})",
                                 source, t, setup.interconnect.gpus_per_node));
  }
  setup.interconnect.gpus_per_device = setup.parallel.gpus_per_device();
  return setup;
}

ModelSetup dense_layer_setup(const ModelSetup& setup) {
  ModelSetup dense = setup;
  dense.model = setup.model.dense_layer_model();
  dense.parallel.expert = 1;
  return dense;
}

}  // namespace zb::models
