// Transformer presets: reading them, and the parameter counts the memory model needs.
#include "models/transformer.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/errors.h"
#include "models/detail/json_fields.h"

namespace zb::models {

namespace {

// One MLP of width f: its GEMMs' parameters, and its biases.
double mlp_gemm_params(const TransformerSpec& m, double f) { return (m.mlp == Mlp::swiglu ? 3 : 2) * m.hidden * f; }
double mlp_bias_params(const TransformerSpec& m, double f) {
  return m.bias ? (m.mlp == Mlp::swiglu ? 2 : 1) * f + m.hidden : 0;
}

}  // namespace

double TransformerSpec::layer_gemm_params() const {
  const double h = hidden;
  // Q, K, V (MLA: down to the latents, then up to the heads' Q, and to K without its shared RoPE
  // part and V) and the output projection.
  const double attention =
      (mla() ? h * mla_down_width() + (q_lora_rank > 0 ? q_lora_rank : h) * q_hidden() +
                   kv_lora_rank * heads * static_cast<double>(head_dim() + v_head_dim())
             : h * (q_hidden() + k_hidden() + v_hidden())) +
      o_hidden() * h;
  if (!moe()) return attention + mlp_gemm_params(*this, ffn_hidden);
  const double router = h * moe_experts;
  return attention + router + (moe_experts + moe_shared_experts) * mlp_gemm_params(*this, moe_ffn_hidden);
}

double TransformerSpec::layer_params() const {
  const double h = hidden;
  double extra = (rms_norm ? 2 : 4) * h;  // two norms per layer
  if (mla()) extra += (rms_norm ? 1 : 2) * (q_lora_rank + kv_lora_rank);  // the latents' norms
  if (bias) extra += (mla() ? 0 : q_hidden() + k_hidden() + v_hidden()) + h;
  extra += moe() ? (moe_experts + moe_shared_experts) * mlp_bias_params(*this, moe_ffn_hidden)
                 : mlp_bias_params(*this, ffn_hidden);
  return layer_gemm_params() + extra;
}

double TransformerSpec::expert_params() const {
  if (!moe()) return 0;
  return moe_experts * (mlp_gemm_params(*this, moe_ffn_hidden) + mlp_bias_params(*this, moe_ffn_hidden));
}

double TransformerSpec::embedding_params() const {
  return static_cast<double>(vocab) * hidden + (learned_positions ? static_cast<double>(seq_len) * hidden : 0.0);
}

double TransformerSpec::output_params() const {
  return (rms_norm ? 1 : 2) * static_cast<double>(hidden) + static_cast<double>(vocab) * hidden;
}

TransformerSpec TransformerSpec::dense_layer_model() const {
  TransformerSpec dense = *this;
  dense.moe_experts = dense.moe_topk = dense.moe_shared_experts = dense.moe_ffn_hidden = dense.moe_dense_layers = 0;
  return dense;
}

double TransformerSpec::total_params() const {
  const double output = tied_embeddings ? output_params() - static_cast<double>(vocab) * hidden : output_params();
  return (layers - moe_dense_layers) * layer_params() + moe_dense_layers * dense_layer_model().layer_params() +
         embedding_params() + output;
}

TransformerSpec transformer_from_json(const nlohmann::json& object, std::string_view source) {
  if (!object.is_object()) throw InputError(fmt::format("{}: a transformer must be a JSON object", source));
  check_known_fields(object,
                     {"name", "description", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab",
                      "seq_len", "mlp", "norm", "bias", "dropout", "positions", "tied_embeddings", "moe_experts", "moe_topk",
                      "moe_shared_experts", "moe_ffn_hidden", "moe_dense_layers", "q_lora_rank", "kv_lora_rank",
                      "rope_head_dim", "v_head_dim", "sliding_window", "sliding_window_share"},
                     source);
  TransformerSpec spec;
  spec.name = string_field_or(object, "name", source, "");
  spec.layers = int_field(object, "layers", source, 1);
  spec.hidden = int_field(object, "hidden", source, 1);
  spec.heads = int_field(object, "heads", source, 1);
  spec.kv_heads = int_field_or(object, "kv_heads", source, 1, spec.heads);
  spec.head_width = int_field_or(object, "head_dim", source, 1, 0);
  spec.ffn_hidden = int_field_or(object, "ffn_hidden", source, 1, 4 * spec.hidden);
  spec.vocab = int_field(object, "vocab", source, 1);
  spec.seq_len = int_field(object, "seq_len", source, 1);
  const std::string mlp = string_field_or(object, "mlp", source, "gelu");
  if (mlp == "gelu") {
    spec.mlp = Mlp::gelu;
  } else if (mlp == "swiglu") {
    spec.mlp = Mlp::swiglu;
  } else {
    throw InputError(fmt::format("{}: field 'mlp' is \"{}\": expected gelu or swiglu", source, mlp));
  }
  const std::string norm = string_field_or(object, "norm", source, "layernorm");
  if (norm != "layernorm" && norm != "rmsnorm") {
    throw InputError(fmt::format("{}: field 'norm' is \"{}\": expected layernorm or rmsnorm", source, norm));
  }
  spec.rms_norm = norm == "rmsnorm";
  spec.bias = bool_field_or(object, "bias", source, true);
  spec.dropout = bool_field_or(object, "dropout", source, true);
  const std::string positions = string_field_or(object, "positions", source, "learned");
  if (positions != "learned" && positions != "rope") {
    throw InputError(fmt::format("{}: field 'positions' is \"{}\": expected learned or rope", source, positions));
  }
  spec.learned_positions = positions == "learned";
  spec.tied_embeddings = bool_field_or(object, "tied_embeddings", source, true);
  spec.moe_experts = int_field_or(object, "moe_experts", source, 0, 0);
  if (spec.moe()) {
    spec.moe_topk = int_field(object, "moe_topk", source, 1);
    if (spec.moe_topk > spec.moe_experts) {
      throw InputError(fmt::format("{}: field 'moe_topk' is {}: at most moe_experts ({})", source, spec.moe_topk,
                                   spec.moe_experts));
    }
    spec.moe_shared_experts = int_field_or(object, "moe_shared_experts", source, 0, 0);
    spec.moe_ffn_hidden = int_field_or(object, "moe_ffn_hidden", source, 1, spec.ffn_hidden);
    spec.moe_dense_layers = int_field_or(object, "moe_dense_layers", source, 0, 0);
    if (spec.moe_dense_layers >= spec.layers) {
      throw InputError(fmt::format("{}: field 'moe_dense_layers' is {}: fewer than layers ({})", source,
                                   spec.moe_dense_layers, spec.layers));
    }
  } else {
    for (const char* key : {"moe_topk", "moe_shared_experts", "moe_ffn_hidden", "moe_dense_layers"}) {
      if (object.contains(key)) throw InputError(fmt::format("{}: field '{}' needs moe_experts", source, key));
    }
  }
  spec.kv_lora_rank = int_field_or(object, "kv_lora_rank", source, 1, 0);
  if (spec.mla()) {
    spec.q_lora_rank = int_field_or(object, "q_lora_rank", source, 0, 0);
    spec.rope_head_dim = int_field(object, "rope_head_dim", source, 1);
    spec.v_head_width = int_field_or(object, "v_head_dim", source, 1, 0);
    if (object.contains("kv_heads") && spec.kv_heads != spec.heads) {
      throw InputError(fmt::format("{}: field 'kv_heads' is {}: latent attention gives every head its own K and V "
                                   "(kv_heads = heads, {})",
                                   source, spec.kv_heads, spec.heads));
    }
  } else {
    for (const char* key : {"q_lora_rank", "rope_head_dim", "v_head_dim"}) {
      if (object.contains(key)) throw InputError(fmt::format("{}: field '{}' needs kv_lora_rank", source, key));
    }
  }
  spec.sliding_window = int_field_or(object, "sliding_window", source, 1, 0);
  if (spec.sliding_window > 0) {
    spec.sliding_window_share = fraction_field_or(object, "sliding_window_share", source, 1.0);
  } else if (object.contains("sliding_window_share")) {
    throw InputError(fmt::format("{}: field 'sliding_window_share' needs sliding_window", source));
  }
  if (spec.head_width == 0 && spec.hidden % spec.heads != 0) {
    throw InputError(fmt::format("{}: field 'heads' is {}: it must divide hidden ({}), or give head_dim", source,
                                 spec.heads, spec.hidden));
  }
  if (spec.kv_heads > spec.heads || spec.heads % spec.kv_heads != 0) {
    throw InputError(fmt::format("{}: field 'kv_heads' is {}: it must divide heads ({})", source, spec.kv_heads,
                                 spec.heads));
  }
  return spec;
}

}  // namespace zb::models
