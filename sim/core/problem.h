// The problem a schedule is generated for and evaluated against: shape, per-stage costs, memory.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/support/time_units.h"

namespace zb {

// How a device's chunks map to stages. linear: v = 1. interleaved (looped): device d holds
// stages d, d+p, d+2p, ... vshape: v = 2, device d holds stages d and 2p-1-d. bidirectional
// (DualPipe): the stages of vshape, but two model copies: stages 0..p-1 are the "down" copy and
// p..2p-1 the "up" copy, and each microbatch runs through one copy only (Problem::path).
enum class Placement { linear, interleaved, vshape, bidirectional };

std::string_view placement_name(Placement placement);
Placement parse_placement(std::string_view text, std::string_view context);

// A memory limit: an absolute amount (in the units of mem_f), or a multiple of p * M_B ("2p"),
// where M_B is the activation memory one microbatch's forward leaves on a device.
struct MemoryLimit {
  double value = 0;
  bool times_p = false;

  static MemoryLimit parse(std::string_view text, std::string_view context);
  std::string to_string() const;
};

// The one rule on which chunk counts a placement allows; throws InputError naming `context`.
void check_placement_chunks(Placement placement, int chunks, std::string_view context);

// How many of a device's v chunks one microbatch runs through: v, except under bidirectional,
// where a microbatch visits one of the device's two copies (so a per-device cost is not split).
int chunks_per_path(Placement placement, int chunks);

// The stages one microbatch runs through, first to last (its forward's direction).
struct StagePath {
  int first = 0;
  int last = 0;
  bool contains(int stage) const { return stage >= first && stage <= last; }
};

// DeepSeek-V3 gives 20 of the H800's 132 SMs to its dispatch and combine kernels (DeepSeek-V3
// technical report, section 3.2.2).
inline constexpr double kDeepSeekCommSmShare = 20.0 / 132.0;

// The normalised problem: every cost is a per-stage array (size stages()).
struct Problem {
  int devices = 0;       // p
  int microbatches = 0;  // m
  int chunks = 1;        // v: stages per device
  Placement placement = Placement::linear;

  std::vector<double> t_f, t_b, t_w, t_bw;  // per stage, in time_unit
  std::vector<double> t_comm;               // t_comm[s]: boundary s -> s+1 (both directions)
  // Per stage: the all-to-all (MoE expert dispatch/combine) of each F, B and BW on the stage; a
  // pass alone exposes it, an overlapped pair hides it under the partner's compute (pass_time.h).
  // Empty: none.
  std::vector<double> t_a2a;
  // How much of an overlapped pair's compute runs concurrently, in [0, 1]: 0 runs the two parts
  // one after the other, 1 hides the shorter one entirely.
  double overlap = 0;
  // The share of each part's all-to-all an overlapped pair hides under the partner's compute: 1
  // (DualPipe, Megatron's overlap_moe_expert_parallel_comm) to 0 (every all-to-all exposed).
  double a2a_overlap = 1;
  // The share of the GPU's SMs the all-to-all kernels take while they run beside a pair's compute,
  // which runs slower by as much meanwhile: in [0, 1).
  double comm_sm_share = kDeepSeekCommSmShare;
  std::vector<double> mem_f, mem_b, mem_w;  // per stage activation deltas; sum to 0 per stage
  // Activation offload (Pass::O and Pass::L): per stage, the time one offload or reload of one
  // microbatch's activations takes on the device's copy engine (one way over its host link), and
  // the memory an offload frees and its reload takes back (empty: mem_f, all that F left). Empty
  // t_offload: the problem describes no offload, and a schedule with O or L is refused.
  std::vector<double> t_offload;
  std::vector<double> mem_offload;
  std::optional<MemoryLimit> mem_limit;
  double bytes_act = 0;  // activation bytes per microbatch across a stage boundary (engines)
  TimeUnit time_unit = TimeUnit::ms;
  // The optimizer step between training steps (docs/design.md section 7): t_opt[d] is device d's
  // update of all its stages (size p, or empty: 0); t_reduce_hop one message of the gradient-norm all-reduce,
  // which chains through the stages from last to first, then goes from stage 0 to every device.
  std::vector<double> t_opt;
  double t_reduce_hop = 0;
  // Data parallelism (docs/design.md section 7): t_dp_reduce[s] is the all-reduce of stage s's
  // gradients over its data-parallel replicas, run on the device's communication stream from the
  // start of the stage's last weight-gradient pass (size stages(), or empty: no data parallelism).
  std::vector<double> t_dp_reduce;
  // The share of each stage's reduction that runs beside the compute from that start (1: Megatron's
  // overlapped gradient reduction); the rest waits for the device's last pass (0: DeepSpeed's
  // pipeline engine and Megatron-LM's local DDP, which reduce after the whole pipeline).
  double dp_reduce_overlap = 1;

  int stages() const { return devices * chunks; }
  int device_of_stage(int stage) const;
  int chunk_of_stage(int stage) const;
  int stage_of(int device, int chunk) const;

  // The stages microbatch i runs through: every stage, except under bidirectional, where the
  // first m/2 (rounded down) microbatches run the down copy (stages 0..p-1) and the others the up
  // copy (p..2p-1).
  StagePath path(int microbatch) const;
  // Whether any microbatch goes from stage s to s+1 (bidirectional: not from one copy to the other).
  bool crosses(int stage) const {
    return stage + 1 < stages() && !(placement == Placement::bidirectional && stage + 1 == devices);
  }
  // How many microbatches run through `stage`: m, or about m/2 under bidirectional.
  int microbatches_through(int stage) const;
  // Copies of the model's parameters the placement keeps (static memory): 2 under bidirectional.
  int parameter_copies() const { return placement == Placement::bidirectional ? 2 : 1; }

  // Transfer time between stage s and s+1: zero when both live on the same device.
  double comm_after(int stage) const;

  // Activation memory one microbatch's forwards leave on a device (sum of mem_f over the device's
  // stages on its path; the larger copy's under bidirectional).
  double activation_per_microbatch(int device) const;
  // M_B of the memory-limit notation: the larger activation_per_microbatch of devices 0 and 1.
  double activation_unit() const;
  // The limit in absolute units, if any.
  std::optional<double> memory_limit() const;

  // Sum over the device's stages of microbatches_through * (t_f + t_b + t_w): the bubble-free
  // time of one device.
  double device_work(int device) const;
  // The bubble-rate denominator's work: the largest device_work.
  double work() const;
  // The memory an offload of the stage frees (mem_offload, else mem_f).
  double offload_memory(int stage) const {
    const auto s = static_cast<std::size_t>(stage);
    return mem_offload.empty() ? mem_f[s] : mem_offload[s];
  }
  // t_opt of the device (0 when not given).
  double optimizer_time(int device) const;
  // t_dp_reduce of the stage (0 when not given).
  double dp_reduce_time(int stage) const;

  // Throws InputError naming the field and value when something is inconsistent.
  void validate() const;
};

// PipeOffload's k (Wan et al. 2025, Eq. 1): a round trip of the activations over the host link
// (2 t_offload) over their compute (t_f + t_b + t_w); k <= 1 lets the copies hide. Not finite
// without compute.
inline double offload_ratio(double t_offload, double t_f, double t_b, double t_w) {
  return 2 * t_offload / (t_f + t_b + t_w);
}

// The V schedules' precondition: two chunks per device in a V. InputError naming `generator`
// and what the problem has otherwise.
void require_vshape(const Problem& problem, std::string_view generator);

}  // namespace zb
