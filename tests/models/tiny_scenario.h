// The small model-driven scenario the cost-model tests derive hand-checkable numbers from.
#pragma once

#include <nlohmann/json.hpp>

namespace zb::models::testing {

// 4 layers, 100 TFLOPS at a flat 50% MFU, 1000 GB/s of memory, nodes of 2 GPUs: NVLink 100 GB/s +
// 2 us, NIC 10 GB/s + 10 us.
inline nlohmann::json tiny_scenario() {
  return nlohmann::json::parse(R"({
    "model": {"layers": 4, "hidden": 1024, "heads": 8, "vocab": 1000, "seq_len": 512},
    "hardware": {"peak_tflops_bf16": 100, "memory_bandwidth_GBps": 1000, "sm_count": 100, "memory_GB": 80,
                 "reserved_GB": 0, "gpus_per_node": 2,
                 "nvlink": {"bandwidth_GBps": 100, "latency_us": 2},
                 "nic": {"bandwidth_GBps": 10, "latency_us": 10}},
    "microbatch_size": 2, "mfu": 0.5})");
}

}  // namespace zb::models::testing
