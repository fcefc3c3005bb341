// The per-piece cost model: the kernels of F, B and W with their shapes and bytes, and the
// activation bytes they keep.
#include "models/detail/layer_costs.h"

#include <algorithm>

#include "models/detail/kernel_time.h"

namespace zb::models {

namespace {

// One pass on one GPU, kernel by kernel: model flops and milliseconds. With `mfu` set, GEMMs and
// attention take flops / (peak x mfu) and memory-bound passes are taken as folded into that.
class Pass {
 public:
  explicit Pass(const ModelSetup& setup)
      : gpu_(setup.hardware),
        mfu_(setup.mfu),
        precision_(setup.precision),
        tp_overlap_chunks_(setup.parallel.tp_comm_overlap ? setup.parallel.tensor : 0) {}

  void gemm(const GemmShape& shape) {
    const double flops = 2 * shape.batch * shape.m * shape.n * shape.k;
    flops_ += flops;
    ms_ += mfu_ ? flat_ms(flops) : gemm_ms(gpu_, shape) + overhead_ms();
  }
  // A fused attention kernel (flash attention): its GEMMs on chip, doing `work` of their tiles
  // (1/2 under a causal mask), reading and writing `bytes` from HBM; `flops` is what it counts
  // as model flops (a recomputed GEMM is not).
  void fused(std::initializer_list<GemmShape> shapes, double work, double bytes, double flops) {
    double compute = 0;
    for (const GemmShape& shape : shapes) {
      compute += tensor_core_ms(gpu_, shape, gpu_.efficiency.attention_sustained_fraction);
    }
    flops_ += flops;
    ms_ += mfu_ ? flat_ms(flops) : std::max(work * compute, memory_pass_ms(gpu_, bytes)) + overhead_ms();
  }
  // A linear layer's GEMM. Under FP8 (models/precision.h) its 16-bit operand of `cast_elements`
  // elements is cast first (read 2 bytes, write the FP8 value and its transpose for the other pass:
  // 4 bytes; current and row-wise scaling read it once more for the amax: 6), then the GEMM runs
  // at the FP8 rate (row-wise: the 16-bit rate). Weights are cast once per step, not per
  // microbatch, and are left out; 0 elements: the operands were cast in an earlier pass (the
  // weight gradient's).
  void linear(GemmShape shape, double cast_elements) {
    if (precision_ != Precision::bf16 && !mfu_) {
      if (cast_elements > 0) memory(cast_elements * (precision_ == Precision::fp8 ? 4 : 6));
      shape.fp8 = precision_ != Precision::fp8_rowwise;
    }
    gemm(shape);
  }
  // A linear layer and the tensor-parallel collective that feeds it (an all-gather) or follows it
  // (a reduce-scatter). With tp_comm_overlap (models/parallelism.h) the two run side by side in
  // t chunks: max(g, c) + min(g, c) / t; else one after the other.
  void linear_with(GemmShape shape, double cast_elements, double collective_ms) {
    if (tp_overlap_chunks_ < 2 || collective_ms <= 0) {
      linear(shape, cast_elements);
      collective(collective_ms);
      return;
    }
    const double before = ms_;
    linear(shape, cast_elements);
    const double g = ms_ - before;
    ms_ = before + std::max(g, collective_ms) + std::min(g, collective_ms) / tp_overlap_chunks_ + overhead_ms();
  }
  // Elementwise and reduction kernels: bytes read and written.
  void memory(double bytes) {
    if (!mfu_) ms_ += memory_pass_ms(gpu_, bytes) + overhead_ms();
  }
  // A tensor-parallel collective (none when ms is 0: one GPU per device).
  void collective(double ms) {
    if (ms > 0) ms_ += ms + overhead_ms();
  }
  // An expert-parallel all-to-all (dispatch, combine): part of the pass alone, and also counted
  // apart, as what an overlapped pair may hide under its partner's compute (sim/core/pass_time.h).
  void all_to_all(double ms) {
    collective(ms);
    if (ms > 0) a2a_ms_ += ms;
  }
  // A transfer that runs beside the pass's kernels and that it waits for at its end: the pass
  // takes the longer of the two.
  void overlap(double ms) { ms_ = std::max(ms_, ms); }
  void add(const Pass& other) {
    flops_ += other.flops_;
    ms_ += other.ms_;
    a2a_ms_ += other.a2a_ms_;
  }

  double flops() const { return flops_; }
  double ms() const { return ms_; }
  double a2a_ms() const { return a2a_ms_; }

 private:
  double flat_ms(double flops) const { return flops / (gpu_.peak_tflops_bf16 * 1e9 * *mfu_); }
  double overhead_ms() const { return gpu_.efficiency.kernel_overhead_us * 1e-3; }

  const HardwareSpec& gpu_;
  std::optional<double> mfu_;
  Precision precision_;
  int tp_overlap_chunks_;  // 0: tensor-parallel collectives after or before their GEMMs
  double flops_ = 0;
  double ms_ = 0;
  double a2a_ms_ = 0;  // of ms_
};

// The shapes every piece needs, per GPU of a tensor-parallel group.
struct Dims {
  double b, s, h, a, f, v, t, tokens;
  // Attention widths: Q, K and V (kv_heads of them), the output (the out projection's input), the
  // query-key and value head dims; MLA's latents (ql 0: Q straight from h) and its RoPE width.
  double q, k, vw, o, d, dv, ql, kvl, dr;
  double c, queries;  // context parallelism: each GPU holds s / c of every sequence (its queries)
  double rep;  // the share of the replicated (norm, dropout, residual) tensors a GPU holds: 1/t with sequence parallelism
  double drop;
  bool swiglu, rope;
  // Mixture of experts (experts 0: dense, f the MLP's width; else f is the shared experts' width):
  // each GPU routes its `routed` token copies (its tokens x top-k), receives `received` of the
  // group's (moe_imbalance times its share on the busiest GPU, which the stage waits for) and
  // computes `local` experts of fe, each on `per_expert` of them.
  double experts, fe, ep, routed, received, local, per_expert;

  explicit Dims(const ModelSetup& setup) {
    const TransformerSpec& model = setup.model;
    b = setup.microbatch_size;
    s = model.seq_len;
    h = model.hidden;
    a = model.heads;
    f = model.moe() ? static_cast<double>(model.moe_shared_experts) * model.moe_ffn_hidden : model.ffn_hidden;
    q = model.q_hidden();
    k = model.k_hidden();
    vw = model.v_hidden();
    o = model.o_hidden();
    d = model.qk_head_dim();
    dv = model.v_head_dim();
    ql = model.q_lora_rank;
    kvl = model.kv_lora_rank;
    dr = model.rope_head_dim;
    v = model.vocab;
    t = setup.parallel.tensor;
    c = setup.parallel.context;
    queries = s / c;
    tokens = b * queries;
    rep = setup.parallel.sequence_parallel ? 1 / t : 1;
    drop = model.dropout ? 1 : 0;
    swiglu = model.mlp == Mlp::swiglu;
    rope = !model.learned_positions;
    experts = model.moe_experts;
    fe = model.moe_ffn_hidden;
    ep = setup.parallel.expert;
    routed = model.moe() ? tokens * rep * model.moe_topk : 0;
    received = routed * setup.parallel.moe_imbalance;
    local = model.moe() ? experts / ep : 0;
    per_expert = model.moe() ? received / local : 0;
  }
};

// The tensor-parallel collectives of one activation (2bsh bytes) on the intra-node link: an
// all-reduce without sequence parallelism, a reduce-scatter or an all-gather with it.
struct Collectives {
  double reduce_ms;  // after a row-parallel GEMM (F) or a column-parallel one's input gradient (B)
  double gather_ms;  // before a column-parallel GEMM with sequence parallelism, else 0

  Collectives(const ModelSetup& setup, const Dims& dims) {
    const double bytes = 2 * dims.tokens * dims.h;
    const Link& link = setup.interconnect.intra_node;
    const int t = setup.parallel.tensor;
    if (setup.parallel.sequence_parallel) {
      reduce_ms = reduce_scatter_ms(setup.hardware, link, t, bytes);
      gather_ms = reduce_scatter_ms(setup.hardware, link, t, bytes);
    } else {
      reduce_ms = all_reduce_ms(setup.hardware, link, t, bytes);
      gather_ms = 0;
    }
  }
};

// Context parallelism's ring (ring attention): the c GPUs of a sequence pass every chunk of keys
// and values (4 b (s/c) kv / t bytes) around, c - 1 steps on the link between them (NVLink while
// t x c GPUs fit in a node), behind the attention's compute; B passes the keys and values and
// their gradients, twice the bytes.
double context_ring_ms(const ModelSetup& setup, const Dims& x) {
  if (x.c <= 1) return 0;
  const Interconnect& net = setup.interconnect;
  const Link& link = x.t * x.c <= net.gpus_per_node ? net.intra_node : net.inter_node;
  const int ranks = setup.parallel.context;
  return reduce_scatter_ms(setup.hardware, link, ranks, ranks * 2 * x.tokens * (x.k + x.vw) / x.t);
}

// What flash attention computes of the s x s score tiles, averaged over the layers: 1/2 under the
// causal mask; a layer with a sliding window of w computes about w + 128 keys per query (the key
// blocks of 128 its query block straddles, FlashAttention's tile), at most the causal half. Model
// flops count s keys per query in a full layer (the mask ignored, as Megatron counts) and w in a
// windowed one.
struct AttentionWork {
  double tiles;       // share of the s x s tiles computed
  double keys;        // keys per query the model flops count
};

AttentionWork attention_work(const TransformerSpec& model, double s) {
  if (model.sliding_window == 0) return {0.5, s};
  const double w = model.sliding_window;
  const double share = model.sliding_window_share;
  constexpr double kKeyBlock = 128;
  const double windowed = std::min(0.5, (w + kKeyBlock) / s);
  return {(1 - share) * 0.5 + share * windowed, (1 - share) * s + share * std::min(w, s)};
}

// The attention core's forward: QK^T, scale, mask and softmax, dropout, scores x V. Each GPU's
// queries (s / c of them) against all s keys (a sliding window only shortens the fused kernel:
// without it the scores are materialised whole and masked).
Pass attention_forward(const ModelSetup& setup, const Dims& x) {
  Pass pass(setup);
  const double heads = x.b * x.a / x.t;
  const GemmShape scores{x.queries, x.s, x.d, heads};
  const GemmShape values{x.queries, x.dv, x.s, heads};
  if (setup.flash_attention) {
    // Reads Q, every chunk of K and V, and writes the output once.
    const AttentionWork work = attention_work(setup.model, x.s);
    pass.fused({scores, values}, work.tiles, (x.tokens * 2 * (x.q + x.o) + x.b * x.s * 2 * (x.k + x.vw)) / x.t,
               2 * x.tokens * work.keys * (x.q + x.o) / x.t);
  } else {
    const double elements = x.tokens * x.a / x.t * x.s;  // per score tensor
    pass.gemm(scores);
    pass.memory(elements * 4);                // softmax: read and write 16-bit scores
    pass.memory(x.drop * elements * 5);       // dropout: read, write, 1-byte mask
    pass.gemm(values);
  }
  pass.overlap(context_ring_ms(setup, x));
  return pass;
}

// The attention core's backward (flash attention recomputes the scores).
Pass attention_backward(const ModelSetup& setup, const Dims& x) {
  Pass pass(setup);
  const double T = x.tokens;
  const double heads = x.b * x.a / x.t;
  const GemmShape scores{x.queries, x.s, x.d, heads};        // recomputed scores
  const GemmShape gradient_scores{x.queries, x.s, x.dv, heads};  // dP = dO V^T
  const GemmShape values{x.queries, x.dv, x.s, heads};       // dV = P^T dO
  const GemmShape keys{x.queries, x.d, x.s, heads};          // dQ = dS K, dK = dS^T Q
  if (setup.flash_attention) {
    // Reads Q, O, dO and every chunk of K and V, writes dQ and every chunk's dK and dV.
    const AttentionWork work = attention_work(setup.model, x.s);
    pass.fused({scores, gradient_scores, values, keys, keys}, work.tiles,
               (T * (4 * x.q + 4 * x.o) + x.b * x.s * 4 * (x.k + x.vw)) / x.t, 4 * T * work.keys * (x.q + x.o) / x.t);
  } else {
    const double elements = T * x.a / x.t * x.s;
    pass.gemm(values);                        // dV
    pass.gemm(gradient_scores);               // dP
    pass.memory(x.drop * elements * 5);       // dropout's backward
    pass.memory(elements * 6);                // softmax's backward: read P and dP, write dS
    pass.gemm(keys);                          // dQ
    pass.gemm(keys);                          // dK
  }
  pass.overlap(2 * context_ring_ms(setup, x));
  return pass;
}

// One all-to-all of a MoE layer (dispatch or combine, or either's backward): every GPU sends its
// routed token copies, 2 bytes x h each, over its expert-parallel group of consecutive GPUs
// (models/parallelism.h), a node's worth of them in each node it spans; the busiest GPU receives
// moe_imbalance times as many, and the all-to-all ends when it has.
double expert_all_to_all_ms(const ModelSetup& setup, const Dims& x) {
  const Interconnect& net = setup.interconnect;
  return all_to_all_ms(setup.hardware, net.intra_node, net.inter_node, setup.parallel.expert, net.gpus_per_node,
                       x.received * 2 * x.h);
}

// The routed experts of a MoE layer's F, B and W, from the router to the weighted sum; nothing for
// a dense model.
struct RoutedExperts {
  Pass f, b, w;
};

RoutedExperts routed_experts(const ModelSetup& setup, const Dims& x) {
  RoutedExperts r{Pass(setup), Pass(setup), Pass(setup)};
  if (!setup.model.moe()) return r;
  const double tokens = x.tokens * x.rep;  // what this GPU routes: its sequence-parallel shard
  const double up = (x.swiglu ? 2 : 1) * x.fe;
  const double a2a = expert_all_to_all_ms(setup, x);
  r.f.gemm({tokens, x.experts, x.h});        // router logits
  r.f.memory(tokens * x.experts * 8);        // softmax and top-k over fp32 logits
  r.f.memory(x.routed * 4 * x.h);            // permute: one copy per chosen expert, grouped by expert
  r.f.all_to_all(a2a);                       // dispatch
  r.f.linear({x.per_expert, up, x.h, x.local}, x.received * x.h);  // grouped GEMM, gate and up
  r.f.memory(x.received * (x.swiglu ? 6 : 4) * x.fe);
  r.f.linear({x.per_expert, x.h, x.fe, x.local}, x.received * x.fe);  // grouped GEMM, down
  r.f.all_to_all(a2a);                       // combine
  r.f.memory(x.routed * 4 * x.h + tokens * 2 * x.h);  // un-permute, weight and sum the copies
  r.b.memory(x.routed * 4 * x.h);            // the sum's and the weights' gradients, permuted
  r.b.all_to_all(a2a);                       // combine's backward
  r.b.linear({x.per_expert, x.fe, x.h, x.local}, x.received * x.h);
  r.b.memory(x.received * (x.swiglu ? 10 : 6) * x.fe);
  r.b.linear({x.per_expert, x.h, up, x.local}, x.received * up);
  r.b.all_to_all(a2a);                       // dispatch's backward
  r.b.memory(x.routed * 4 * x.h);            // un-permute the input gradients
  r.b.gemm({tokens, x.h, x.experts});        // router
  r.w.linear({x.h, up, x.per_expert, x.local, 8}, 0);
  r.w.linear({x.fe, x.h, x.per_expert, x.local, 8}, 0);
  r.w.gemm({x.h, x.experts, tokens, 1, 8});
  return r;
}

// What selective recomputation reruns in B (models/parallelism.h, RecomputeModules).
struct Rerun {
  bool core, norms, up, act;
};

Rerun rerun_of(const ModelSetup& setup) {
  const bool selective = setup.parallel.recompute == Recompute::selective;
  const RecomputeModules& modules = setup.parallel.recompute_modules;
  return {selective && modules.core_attn && !setup.flash_attention,  // flash attention recomputes anyway
          selective && modules.layernorm, selective && modules.mla_up_proj && setup.model.mla(),
          selective && modules.moe_act && setup.model.moe()};
}

// M_B: what F keeps for B, in bytes (16-bit values, 1-byte dropout masks).
double kept_for_backward(const ModelSetup& setup, const Dims& x, const Rerun& which) {
  const double T = x.tokens;
  if (setup.parallel.recompute == Recompute::full) return T * x.rep * 2 * x.h;  // the layer's input only
  double attention_block = x.rep * 2 * x.h       // input of the QKV projection
                           + 2 * x.q / x.t       // Q
                           + 2 * (x.k + x.vw) / x.t  // K and V
                           + 2 * x.o / x.t       // input of the output projection
                           + 4 * (x.ql + x.kvl) + 2 * x.dr  // MLA: the latents before and after their norms, the RoPE key
                           + x.rep * x.drop * x.h;  // residual dropout mask
  if (!setup.flash_attention && !which.core) {
    attention_block += (setup.model.dropout ? 5 : 2) * x.a / x.t * x.s;  // softmax (+ mask, dropout out)
  }
  if (which.norms) attention_block -= 2 * x.rep * 2 * x.h + 2 * (x.ql + x.kvl);  // the norms' outputs
  if (which.up) attention_block -= 2 * x.q / x.t + 2 * (x.k + x.vw) / x.t;    // Q, K and V
  double mlp_block = x.rep * 2 * x.h + (x.swiglu ? 8 : 4) * x.f / x.t  // input; gate, up, silu, product or gelu in, out
                     + x.rep * x.drop * x.h
                     // routed copies the GPU received: permuted input; gate, up, silu, product (or gelu in, out)
                     + x.received / T * (2 * x.h + (x.swiglu ? 8 : 4) * x.fe);
  if (which.act) mlp_block -= x.received / T * (x.swiglu ? 4 : 2) * x.fe;  // the activation's outputs
  const double norms = x.rep * 4 * x.h;
  return T * (attention_block + mlp_block + norms);
}

}  // namespace

PieceCosts layer_costs(const ModelSetup& setup) {
  const Dims x(setup);
  const Collectives tp(setup, x);
  const double T = x.tokens;
  const bool mla = setup.model.mla();
  // Without MLA one column-parallel GEMM makes Q, K and V. MLA (Megatron's MLA): the projections
  // down to the latents, whole on every GPU of the group (`down`), their norms, and column-
  // parallel projections up from them to Q (`q_in`: from h when there is no Q latent) and to K
  // and V (`kv_up`).
  const double qkv_width = mla ? 0 : (x.q + x.k + x.vw) / x.t;
  const double down = setup.model.mla_down_width();
  const double q_in = x.ql > 0 ? x.ql : x.h;
  const double kv_up = x.a * (x.d - x.dr + x.dv) / x.t;
  const double latent_reduce_ms =
      mla && x.t > 1 ? all_reduce_ms(setup.hardware, setup.interconnect.intra_node, setup.parallel.tensor, 2 * T * down) : 0;
  const double rotated = mla ? x.a * x.dr / x.t + x.dr : (x.q + x.k) / x.t;  // RoPE's share of Q and K
  const double up_width = (x.swiglu ? 2 : 1) * x.f / x.t;
  const Recompute recompute = setup.parallel.recompute;
  const Rerun which = rerun_of(setup);

  // MLA's projections up from the latents to Q, K and V (what mla_up_proj recomputes).
  Pass up(setup);
  if (mla) {
    up.linear({T, x.q / x.t, q_in}, T * q_in);
    up.linear({T, kv_up, x.kvl}, T * x.kvl);
  }

  // F, in the order it runs.
  Pass f(setup);
  f.memory(T * x.rep * 4 * x.h);            // norm 1
  if (mla) {
    f.linear_with({T, down, x.h}, T * x.h, tp.gather_ms);
    f.memory(T * 4 * (x.ql + x.kvl));       // the latents' norms
    f.add(up);
  } else {
    f.linear_with({T, qkv_width, x.h}, T * x.h, tp.gather_ms);
  }
  if (x.rope) f.memory(T * 4 * rotated);    // rotate Q and K
  const Pass core = attention_forward(setup, x);
  f.add(core);
  f.linear_with({T, x.h, x.o / x.t}, T * x.o / x.t, tp.reduce_ms);  // output projection (row-parallel)
  f.memory(T * x.rep * (6 + x.drop) * x.h);  // bias, dropout and residual add
  f.memory(T * x.rep * 4 * x.h);            // norm 2
  if (x.f > 0) {  // the dense MLP (a MoE layer's shared experts)
    f.linear_with({T, up_width, x.h}, T * x.h, tp.gather_ms);
    f.memory(T * (x.swiglu ? 6 : 4) * x.f / x.t);  // GeLU, or SiLU(gate) x up
    f.linear_with({T, x.h, x.f / x.t}, T * x.f / x.t, tp.reduce_ms);  // down projection (row-parallel)
  }
  const RoutedExperts moe = routed_experts(setup, x);
  f.add(moe.f);
  f.memory(T * x.rep * (6 + x.drop) * x.h);

  // B: input gradients, last kernel first.
  Pass b(setup);
  if (recompute == Recompute::full) b.add(f);
  // Selective recomputation reruns its modules' forwards (not model flops).
  Pass rerun(setup);
  if (which.core) rerun.add(core);
  if (which.norms) {
    rerun.memory(2 * T * x.rep * 4 * x.h);
    rerun.memory(T * 4 * (x.ql + x.kvl));
  }
  if (which.up) {
    rerun.add(up);
    if (x.rope) rerun.memory(T * 4 * rotated);
  }
  if (which.act) rerun.memory(x.received * (x.swiglu ? 6 : 4) * x.fe);
  b.add(rerun);
  for (int block = 0; block < 2; ++block) {
    b.memory(T * x.rep * (6 + 5 * x.drop) * x.h);  // residual gradient add (+ dropout's backward)
  }
  b.add(moe.b);
  if (x.f > 0) {
    // The row-parallel output's gradient, gathered; the down projection.
    b.linear_with({T, x.f / x.t, x.h}, T * x.h, tp.gather_ms);
    b.memory(T * (x.swiglu ? 10 : 6) * x.f / x.t);
    b.linear_with({T, x.h, up_width}, T * up_width, tp.reduce_ms);
  }
  b.memory(T * x.rep * 6 * x.h);            // norm 2: read input and gradient, write gradient
  b.linear_with({T, x.o / x.t, x.h}, T * x.h, tp.gather_ms);  // output projection
  b.add(attention_backward(setup, x));
  if (x.rope) b.memory(T * 4 * rotated);
  if (mla) {
    b.linear({T, x.kvl, kv_up}, T * kv_up);
    b.linear({T, q_in, x.q / x.t}, T * x.q / x.t);
    b.collective(latent_reduce_ms);         // the latents' gradients, summed over the group
    b.memory(T * 6 * (x.ql + x.kvl));       // the latents' norms
    b.linear_with({T, x.h, down}, T * down, tp.reduce_ms);
  } else {
    b.linear_with({T, x.h, qkv_width}, T * qkv_width, tp.reduce_ms);
  }
  b.memory(T * x.rep * 6 * x.h);            // norm 1

  // W: weight gradients, accumulated into fp32 (8 bytes per element read and written).
  Pass w(setup);
  // The norms' outputs (kept sharded) are gathered again, each for its GEMM.
  if (mla) {
    w.linear_with({x.h, down, T, 1, 8}, 0, tp.gather_ms);
    w.linear({q_in, x.q / x.t, T, 1, 8}, 0);
    w.linear({x.kvl, kv_up, T, 1, 8}, 0);
  } else {
    w.linear_with({x.h, qkv_width, T, 1, 8}, 0, tp.gather_ms);
  }
  w.linear({x.o / x.t, x.h, T, 1, 8}, 0);
  if (x.f > 0) {
    w.linear_with({x.h, up_width, T, 1, 8}, 0, tp.gather_ms);
    w.linear({x.f / x.t, x.h, T, 1, 8}, 0);
  }
  w.add(moe.w);

  PieceCosts costs;
  costs.flops_f = f.flops();
  costs.flops_b = b.flops() - (recompute == Recompute::full ? f.flops() : 0) - rerun.flops();
  costs.flops_w = w.flops();
  costs.t_f_ms = f.ms();
  costs.t_b_ms = b.ms();
  costs.t_w_ms = w.ms();
  // What a pair may hide: F's dispatch and combine, and as much of B's (a recomputed forward's
  // all-to-all stays in B's compute, which no pair hides).
  costs.t_a2a_ms = std::min(f.a2a_ms(), b.a2a_ms());

  costs.act_b_bytes = kept_for_backward(setup, x, which);
  // M_W: the inputs of the GEMMs (the norms' outputs sharded with sequence parallelism, gathered
  // again in W) and the gradients of their outputs (the row-parallel ones whole).
  const double gemm_inputs =
      x.rep * 2 * x.h + 2 * x.o / x.t + x.rep * 2 * x.h + 2 * x.f / x.t + 2 * (x.ql + x.kvl);  // MLA: the up projections'
  const double attention_grads = mla ? 2 * (x.q / x.t + kv_up + down) : 2 * qkv_width;
  const double output_grads = attention_grads + 2 * x.h + (x.swiglu ? 4 : 2) * x.f / x.t + 2 * x.h;
  // Routed copies: the grouped GEMMs' inputs (permuted tokens, the activation's output) and their
  // outputs' gradients.
  const double routed = x.received / T * (2 * x.h + 2 * x.fe + (x.swiglu ? 4 : 2) * x.fe + 2 * x.h);
  costs.act_w_bytes = T * (gemm_inputs + output_grads + routed);
  return costs;
}

PieceCosts embedding_costs(const ModelSetup& setup) {
  const Dims x(setup);
  const Collectives tp(setup, x);
  const double T = x.tokens;
  const double positions = setup.model.learned_positions ? 1 : 0;
  Pass f(setup);
  f.memory(T * 4 * x.h);                    // gather the rows of this GPU's vocabulary shard
  f.memory(positions * T * 6 * x.h);        // read the position rows, add them
  f.collective(tp.reduce_ms);
  f.memory(T * x.rep * 5 * x.drop * x.h);   // embedding dropout
  Pass w(setup);
  w.collective(tp.gather_ms);
  w.memory(T * x.rep * 5 * x.drop * x.h);   // dropout's backward
  w.memory((1 + positions) * T * 10 * x.h);  // read the gradient, add it into fp32 rows
  PieceCosts costs;
  costs.t_f_ms = f.ms();
  costs.t_w_ms = w.ms();
  costs.act_b_bytes = T * x.rep * x.drop * x.h;
  costs.act_w_bytes = T * x.rep * (2 + x.drop) * x.h;
  return costs;
}

PieceCosts output_costs(const ModelSetup& setup) {
  const Dims x(setup);
  const Collectives tp(setup, x);
  const double T = x.tokens;
  const double vocab = x.v / x.t;
  const Link& link = setup.interconnect.intra_node;
  const int t = setup.parallel.tensor;
  Pass f(setup);
  f.memory(T * x.rep * 4 * x.h);            // final norm
  f.collective(tp.gather_ms);
  f.gemm({T, vocab, x.h});                  // logits of this GPU's vocabulary shard
  // Cross-entropy: read the 16-bit logits, write their fp32 softmax, read it for the sums; the
  // shards agree on the maximum, the sum and the target's logit (three all-reduces of bs floats).
  f.memory(T * 10 * vocab);
  f.collective(3 * all_reduce_ms(setup.hardware, link, t, 4 * T));
  Pass b(setup);
  b.memory(T * 6 * vocab);                  // softmax - one-hot: read fp32, write the 16-bit gradient
  b.gemm({T, x.h, vocab});
  b.collective(tp.reduce_ms);
  b.memory(T * x.rep * 6 * x.h);            // final norm
  Pass w(setup);
  w.gemm({vocab, x.h, T, 1, 8});
  PieceCosts costs;
  costs.flops_f = f.flops();
  costs.flops_b = b.flops();
  costs.flops_w = w.flops();
  costs.t_f_ms = f.ms();
  costs.t_b_ms = b.ms();
  costs.t_w_ms = w.ms();
  costs.act_b_bytes = T * (x.rep * 2 * x.h + 2 * x.h + 6 * vocab);
  costs.act_w_bytes = T * (2 * x.h + 2 * vocab);
  return costs;
}

}  // namespace zb::models
