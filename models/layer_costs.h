// Flops of F, B and W and activation bytes (M_B, M_W) of one microbatch through one layer.
#pragma once

#include "models/transformer.h"

namespace zb::models {

// One microbatch of b sequences through one piece of the model. The paper's counts for a GPT
// layer (hidden h, heads a, sequence s): F = bsh(24h + 4s), B = bsh(24h + 8s), W = 24bsh^2 flops;
// M_B = bs(34h + 5as) bytes kept from F until B, M_W = 32bsh bytes kept from B until W (16-bit).
struct PieceCosts {
  double flops_f = 0;
  double flops_b = 0;  // input gradients only
  double flops_w = 0;  // weight gradients only
  double act_b_bytes = 0;  // M_B: what F leaves behind for B
  double act_w_bytes = 0;  // M_W: what B leaves behind for W
};

// A transformer layer. Generalised from the paper's counts: every GEMM costs 2 flops per
// multiply-add and token in F, the same again in B (input gradient) and in W (weight gradient);
// attention scores and values cost 4bs^2h in F and twice that in B (they have no weights).
// Activations follow Korthikanti et al. (the paper's M_B), with K and V narrowed by grouped-query
// attention, SwiGLU's gate, up and product tensors, no dropout masks without dropout, and no
// s x s attention tensors with flash attention.
PieceCosts layer_costs(const TransformerSpec& model, int microbatch_size, bool flash_attention);

// The embedding lookup on the first stage: no flops; its weight gradient needs the gradient of
// its output (2bsh bytes), which B delivers and W consumes.
PieceCosts embedding_costs(const TransformerSpec& model, int microbatch_size);

// Final norm, output layer (V x h GEMM) and loss on the last stage: 2bshV flops in each of F, B
// and W; F keeps the norm's input and output and the logits in 16 and 32 bits (4bsh + 6bsV).
PieceCosts output_costs(const TransformerSpec& model, int microbatch_size);

}  // namespace zb::models
