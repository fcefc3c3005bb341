// Time of F, B and W and activation bytes (M_B, M_W) of one microbatch through one piece of the
// model (a transformer layer, the embedding, the output layer and loss), on one GPU of a
// pipeline device.
#pragma once

#include "models/model_setup.h"

namespace zb::models {

// One microbatch of b sequences through one piece, per GPU (a tensor-parallel group of t GPUs
// splits the work). The paper's counts for a GPT layer at t = 1 (hidden h, heads a, sequence s):
// F = bsh(24h + 4s), B = bsh(24h + 8s), W = 24bsh^2 flops; M_B = bs(34h + 5as) bytes kept from F
// until B, M_W = 32bsh bytes kept from B until W (16-bit).
struct PieceCosts {
  double flops_f = 0;      // model flops (GEMMs and attention), per GPU
  double flops_b = 0;      // input gradients only
  double flops_w = 0;      // weight gradients only
  double t_f_ms = 0;       // every kernel of the pass, recomputation and tensor-parallel collectives
  double t_b_ms = 0;
  double t_w_ms = 0;
  double t_a2a_ms = 0;     // of t_f_ms and of t_b_ms: the expert-parallel all-to-all a pair may hide
  double act_b_bytes = 0;  // M_B: what F leaves behind for B
  double act_w_bytes = 0;  // M_W: what B leaves behind for W
};

// A transformer layer. Flops: every GEMM costs 2 flops per multiply-add in F, the same again in B
// (input gradient) and in W (weight gradient); attention scores and values cost 4bs^2h in F and
// twice that in B (no weights). Times (kernel_time.h): each GEMM by its shape, attention as its
// batched GEMMs (flash attention: one fused kernel that skips the causal mask's upper half and
// recomputes the scores in B), norms, residual adds, dropout, activation, RoPE and softmax at
// memory bandwidth, and with t > 1 two all-reduces in F and two in B (sequence parallelism: an
// all-gather and a reduce-scatter in place of each, plus the all-gathers W needs of the norms'
// sharded outputs) on the intra-node link. With `mfu` set, each pass is flops / (peak x mfu) plus
// the collectives. Activations follow Korthikanti et al. (the paper's M_B), generalised to GQA,
// SwiGLU, no dropout and flash attention, split by t where the tensor is (everything with
// sequence parallelism). Recomputation: selective drops the s x s tensors and adds the attention
// core's forward to B; full keeps only the layer's input and adds the whole forward to B.
PieceCosts layer_costs(const ModelSetup& setup);

// The embedding lookup on the first stage: a vocabulary-parallel gather (and position embedding)
// at memory bandwidth, the tensor-parallel all-reduce of its output in F; no input gradient; its
// weight gradient scatters the output gradient (2bsh bytes, kept from B to W) into the table.
PieceCosts embedding_costs(const ModelSetup& setup);

// Final norm, output layer (a V x h GEMM split over t) and cross-entropy on the last stage: 2bshV
// flops in each of F, B and W; the loss reads the logits and keeps their softmax in fp32 (F keeps
// the norm's input and output and the logits in 16 and 32 bits, 4bsh + 6bsV bytes).
PieceCosts output_costs(const ModelSetup& setup);

}  // namespace zb::models
