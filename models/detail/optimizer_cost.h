// The optimizer step and data parallelism as timed work: the update from the optimizer state's
// bytes and the device's memory bandwidth, and the link the data-parallel gradient all-reduce
// crosses (the all-reduce itself is kernel_time.h's ring).
#pragma once

#include <string_view>

#include "models/hardware.h"
#include "models/interconnect.h"

namespace zb::models {

// Bytes of a gradient per parameter: the bf16 gradient of the 16 bytes per parameter
// (model_setup.h's bytes_per_param: bf16 weight and gradient, fp32 master and two moments).
inline constexpr double kGradientBytesPerParam = 2;

// t_opt of a device holding `state_GB` of parameters, gradients and optimizer state. Adam's
// mixed-precision update is elementwise: about 15 flops per parameter against some 30 bytes moved,
// 0.5 flop/byte, far below any GPU's ridge point (A100: 312 TFLOPS / 2.04 TB/s = 153 flop/byte),
// so it runs at memory bandwidth. Every byte of the state is read once and written once (the
// gradient is read, then zeroed for the next step; the bf16 weight is rewritten from the fp32
// master), so the update moves 2 * state bytes at the datasheet's bandwidth (fused Adam kernels
// reach most of it: a small underestimate). 0 when the hardware gives no bandwidth.
double optimizer_update_ms(double state_GB, const HardwareSpec& hardware);

// The link device d's data-parallel ring crosses: NVLink when all its replicas share d's node,
// else the NICs (a ring is as fast as its slowest link). A device's t x d GPUs are contiguous,
// tensor-parallel innermost (interconnect.h); the cluster was checked to hold them all.
const Link& data_parallel_link(const Interconnect& interconnect, int device, int replicas);

}  // namespace zb::models
