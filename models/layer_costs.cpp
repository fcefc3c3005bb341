// The per-layer cost model: flop counts and activation bytes for F, B and W.
#include "models/layer_costs.h"

namespace zb::models {

PieceCosts layer_costs(const TransformerSpec& model, int microbatch_size, bool flash_attention) {
  const double b = microbatch_size;
  const double s = model.seq_len;
  const double h = model.hidden;
  const double a = model.heads;
  const double f = model.ffn_hidden;
  const double kv = model.kv_hidden();
  const double tokens = b * s;
  PieceCosts costs;
  const double gemm = 2 * tokens * model.layer_gemm_params();
  const double attention = 4 * tokens * s * h;  // QK^T and scores x V over all query heads
  costs.flops_f = gemm + attention;
  costs.flops_b = gemm + 2 * attention;
  costs.flops_w = gemm;

  // M_B in bytes per token (16-bit values, 1-byte dropout masks).
  const double drop = model.dropout ? 1.0 : 0.0;
  double attention_block = 2 * h      // input of the QKV projection
                           + 2 * h    // Q
                           + 4 * kv   // K and V
                           + 2 * h    // input of the output projection
                           + drop * h;  // residual dropout mask
  if (!flash_attention) attention_block += (model.dropout ? 5 : 2) * a * s;  // softmax (+ mask, dropout out)
  const double mlp_block = model.mlp == Mlp::swiglu ? 2 * h + 8 * f + drop * h   // input, gate, up, silu, product
                                                    : 2 * h + 4 * f + drop * h;  // input, gelu in, gelu out
  const double norms = 4 * h;
  costs.act_b_bytes = tokens * (attention_block + mlp_block + norms);

  // M_W: the inputs of the GEMMs and the gradients of their outputs.
  const double gemm_inputs = 2 * h + 2 * h + 2 * h + 2 * f;
  const double output_grads = 2 * (h + 2 * kv) + 2 * h + (model.mlp == Mlp::swiglu ? 4 : 2) * f + 2 * h;
  costs.act_w_bytes = tokens * (gemm_inputs + output_grads);
  return costs;
}

PieceCosts embedding_costs(const TransformerSpec& model, int microbatch_size) {
  PieceCosts costs;
  costs.act_w_bytes = 2.0 * microbatch_size * model.seq_len * model.hidden;
  return costs;
}

PieceCosts output_costs(const TransformerSpec& model, int microbatch_size) {
  const double tokens = static_cast<double>(microbatch_size) * model.seq_len;
  const double h = model.hidden;
  const double v = model.vocab;
  PieceCosts costs;
  costs.flops_f = 2 * tokens * h * v;
  costs.flops_b = 2 * tokens * h * v;
  costs.flops_w = 2 * tokens * h * v;
  costs.act_b_bytes = tokens * (4 * h + 6 * v);
  costs.act_w_bytes = tokens * (2 * h + 2 * v);
  return costs;
}

}  // namespace zb::models
