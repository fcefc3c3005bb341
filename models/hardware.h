// A GPU (and its node's links) as data: peak bf16 speed, HBM bandwidth, SMs, memory, NVLink and NIC.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "models/presets.h"

namespace zb::models {

// One direction of a link: a transfer of n bytes takes latency + n / bandwidth.
struct Link {
  double bandwidth_GBps = 0;  // 1e9 bytes per second
  double latency_us = 0;

  double transfer_ms(double bytes) const { return latency_us * 1e-3 + bytes / (bandwidth_GBps * 1e9) * 1e3; }
};

// The share of a datasheet peak that a tuned library kernel sustains on a large, perfectly tiled
// problem (main-loop prologue and epilogue, clocks under a sustained load). Not on any datasheet:
// the roofline's assumption, stated once here, the same for every GPU; a preset's "calibration"
// replaces it with values fitted to measured runs (Efficiencies below).
// What the shape of a GEMM costs on top (tile and wave quantisation) is models/detail/kernel_time.h.
inline constexpr double kGemmSustainedFraction = 0.8;
inline constexpr double kMemorySustainedFraction = 0.9;
// A fused attention kernel (flash attention) runs its on-chip GEMMs at the GEMM rate: the
// roofline's assumption. Real ones sustain less (softmax between the two GEMMs, the backward's
// extra passes and atomics), which a calibration fits as attention_sustained_fraction.
inline constexpr double kAttentionSustainedFraction = kGemmSustainedFraction;

// What a roofline leaves out, as a GPU and its software stack show it: the share of the peaks its
// GEMM and memory-bound kernels sustain, a fixed cost per kernel (launch, framework dispatch,
// prologue; what makes small kernels slow), the share of the BF16 peak fused attention kernels
// sustain, what a GEMM with a misaligned dimension keeps, and the share of a link's bandwidth its ring collectives
// reach (NCCL's bus bandwidth over the link's). The defaults are the roofline (--cost-model
// roofline). The calibrated values of an architecture live in models/calibration/<architecture>.json
// (and of a preset fitted on its own in <preset>.json), fitted to tests/data/measured/ by zbsim
// calibrate-model, with the rows and the cross-validated error they came from; a preset's own
// "calibration" object (the same fields) takes their place.
struct Efficiencies {
  double gemm_sustained_fraction = kGemmSustainedFraction;
  double memory_sustained_fraction = kMemorySustainedFraction;
  double kernel_overhead_us = 0;
  double collective_efficiency = 1;
  double attention_sustained_fraction = kAttentionSustainedFraction;
  // The share of its rate a GEMM keeps when a dimension is not a whole number of 16-byte vectors
  // (models/detail/kernel_time.h); the roofline ignores alignment: 1.
  double misaligned_gemm_fraction = 1;
};

// Which efficiencies a scenario's cost model uses: the preset's calibration (when it has one), or
// the plain roofline.
enum class CostModel { calibrated, roofline };

// Each efficiency's field name (in hardware objects and calibration files) and member, in one
// order: the one list every reader, writer and fit of them walks. `fraction`: a share in (0, 1];
// else a number >= 0.
struct EfficiencyField {
  std::string_view name;
  double Efficiencies::*member;
  bool fraction;
};
inline constexpr EfficiencyField kEfficiencyFields[] = {
    {"gemm_sustained_fraction", &Efficiencies::gemm_sustained_fraction, true},
    {"memory_sustained_fraction", &Efficiencies::memory_sustained_fraction, true},
    {"kernel_overhead_us", &Efficiencies::kernel_overhead_us, false},
    {"collective_efficiency", &Efficiencies::collective_efficiency, true},
    {"attention_sustained_fraction", &Efficiencies::attention_sustained_fraction, true},
    {"misaligned_gemm_fraction", &Efficiencies::misaligned_gemm_fraction, true},
};

// Writes the six efficiencies into `object` under the field names hardware_from_json reads (a
// hardware object's top level, a calibration file).
void write_efficiencies(const Efficiencies& efficiencies, nlohmann::json& object);

// "calibrated" | "roofline": the one spelling of the scenario field, the flags and the reports.
std::string_view cost_model_name(CostModel cost_model);
std::optional<CostModel> cost_model_from_name(std::string_view name);

struct HardwareSpec {
  std::string name;
  // The GPU generation ("ampere", "hopper"): presets of one share the efficiencies a calibration
  // fits, since they run the same kernels and libraries (zbsim calibrate-model).
  std::string architecture;
  double peak_tflops_bf16 = 0;  // dense tensor-core peak (datasheet)
  double peak_tflops_fp8 = 0;   // dense FP8 tensor-core peak (datasheet); 0: no FP8 tensor cores
  double memory_bandwidth_GBps = 0;  // HBM, 1e9 bytes per second (datasheet)
  int sm_count = 1;                  // streaming multiprocessors (whitepaper): a GEMM wave's width
  Efficiencies efficiency;           // what the cost model uses: one of the two below
  Efficiencies roofline;             // the roofline's, with the fields the object gives at its top level
  Efficiencies calibrated;           // the preset's calibration, with the same fields (= roofline without one)

  // Switches `efficiency` between the two (a front end's --cost-model after the scenario was read).
  void use(CostModel cost_model) { efficiency = cost_model == CostModel::calibrated ? calibrated : roofline; }
  double memory_GB = 0;         // 1e9 bytes
  double reserved_GB = 0;       // kept free: CUDA context, communication buffers, fragmentation
  int gpus_per_node = 8;
  Link nvlink;                  // GPU to GPU inside a node, per direction
  Link nic;                     // GPU to GPU across nodes, per direction
  // GPU to host memory (activation offload), per direction: the PCIe link's datasheet rate and
  // the share of it a copy sustains (kHostLinkSustainedFraction unless the preset says). A
  // bandwidth of 0: not described (the preset has no "host_link"), no offload times.
  Link host_link;
  double host_link_sustained_fraction = 0;

  // One way over the host link: `bytes` at the sustained rate.
  double host_copy_ms(double bytes) const {
    return host_link.latency_us * 1e-3 + bytes / (host_link.bandwidth_GBps * host_link_sustained_fraction * 1e9) * 1e3;
  }
};

// The share of a PCIe link's per-direction rate a large DMA copy carries (first principles: each
// 256-byte write payload travels in a transaction-layer packet with about 24 bytes of header,
// sequence number, LCRC and framing, 256 / 280 = 0.91, and flow-control and acknowledgement packets
// take a few percent more of the wire: about 0.87). The datasheet rate already counts 128b/130b
// encoding. Not fitted: no development row offloads.
inline constexpr double kHostLinkSustainedFraction = 0.87;

// Reads a hardware preset; "nic" is a network preset name, a path or an object
// ({"bandwidth_GBps", "latency_us"}) resolved against base_dir and read with `read`. Errors name
// `source`. The efficiencies: the roofline's, replaced under CostModel::calibrated by the object's
// "calibration", else models/calibration/<preset>.json (`preset`: the shipped preset's name, when
// the object is one), else models/calibration/<architecture>.json; and by any of their fields the
// object gives at its top level.
HardwareSpec hardware_from_json(const nlohmann::json& object, std::string_view source,
                                const std::filesystem::path& base_dir, const ReadJsonFile& read,
                                CostModel cost_model = CostModel::calibrated, std::string_view preset = "");

// Reads a network preset {"name", "bandwidth_GBps", "latency_us"}.
Link link_from_json(const nlohmann::json& object, std::string_view source);

}  // namespace zb::models
