// A decoder-only transformer as data: shape, MLP and attention variants, parameter counts.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>

namespace zb::models {

enum class Mlp { gelu, swiglu };  // gelu: h -> f -> h; swiglu: gate and up h -> f, down f -> h

struct TransformerSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;      // h
  int heads = 0;       // a (query heads)
  int kv_heads = 0;    // key/value heads (grouped-query attention when < heads)
  int head_width = 0;  // d per head when given (Qwen3: 64 heads of 128 on h = 4096); 0: h / a
  int ffn_hidden = 0;  // f
  int vocab = 0;       // V
  int seq_len = 0;     // s
  Mlp mlp = Mlp::gelu;
  bool rms_norm = false;          // RMSNorm (weight only) instead of LayerNorm (weight and bias)
  bool bias = true;               // linear layers have biases
  bool dropout = true;            // attention and residual dropout (their masks are activations)
  bool learned_positions = true;  // a position embedding table of s x h on the first stage
  bool tied_embeddings = true;    // the output layer reuses the embedding (a copy on the last stage)
  // Mixture of experts in every layer (0 experts: a dense MLP of ffn_hidden): each token goes to
  // its top-k of the routed experts, chosen by a router (h x experts), and through every shared
  // expert; each expert is an MLP (the `mlp` kind) of width moe_ffn_hidden.
  int moe_experts = 0;
  int moe_topk = 0;
  int moe_shared_experts = 0;
  int moe_ffn_hidden = 0;
  int moe_dense_layers = 0;  // the first layers are dense MLPs of ffn_hidden (DeepSeek-V3: 3)
  // Multi-head latent attention (DeepSeek-V2/V3) when kv_lora_rank > 0: Q from a rank-q_lora_rank
  // projection (0: straight from h), K and V from one rank-kv_lora_rank latent, each head's query
  // and key of head_dim + rope_head_dim (the RoPE part of the key shared by the heads), values of
  // v_head_dim; every head has its own K and V (kv_heads = heads).
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int rope_head_dim = 0;
  int v_head_width = 0;  // 0: head_dim
  // Sliding-window attention (GPT-OSS, Mistral, Gemma): in a share of the layers each query
  // attends to at most the `sliding_window` tokens before it; the other layers attend causally to
  // the whole sequence. 0: every layer full.
  int sliding_window = 0;
  double sliding_window_share = 0;  // of the layers, in (0, 1]; GPT-OSS alternates: 0.5

  bool moe() const { return moe_experts > 0; }
  bool mla() const { return kv_lora_rank > 0; }
  int head_dim() const { return head_width > 0 ? head_width : hidden / heads; }
  int qk_head_dim() const { return head_dim() + rope_head_dim; }  // what a query meets a key over
  int v_head_dim() const { return v_head_width > 0 ? v_head_width : head_dim(); }
  // Width of Q: heads * qk_head_dim, h unless head_dim or MLA say otherwise.
  double q_hidden() const { return static_cast<double>(heads) * qk_head_dim(); }
  // Widths of K and V: kv_heads * qk_head_dim and kv_heads * v_head_dim.
  double k_hidden() const { return static_cast<double>(kv_heads) * qk_head_dim(); }
  double v_hidden() const { return static_cast<double>(kv_heads) * v_head_dim(); }
  // Width of the attention's output (the output projection's input): heads * v_head_dim.
  double o_hidden() const { return static_cast<double>(heads) * v_head_dim(); }
  // MLA's projections down to the latents (whole on every GPU of a tensor-parallel group):
  // h -> q_lora_rank and h -> kv_lora_rank + rope_head_dim.
  double mla_down_width() const { return mla() ? q_lora_rank + kv_lora_rank + rope_head_dim : 0.0; }
  // A dense layer of this model (moe_dense_layers of them come first): the MoE fields cleared.
  TransformerSpec dense_layer_model() const;
  // Parameters of the matrix multiplications of one layer (what the GEMM flops scale with).
  double layer_gemm_params() const;
  double layer_params() const;      // GEMMs + biases + norms (a MoE layer's, in a MoE model)
  double expert_params() const;     // the routed experts' share of layer_params (split over expert parallelism)
  double embedding_params() const;  // V x h (+ s x h learned positions): first stage
  double output_params() const;     // final norm + V x h output layer: last stage
  double total_params() const;      // counts a tied output layer once
};

// Reads a transformer preset; unknown fields are errors naming `source`.
TransformerSpec transformer_from_json(const nlohmann::json& object, std::string_view source);

}  // namespace zb::models
