// The handcrafted generators (pure, deterministic, no I/O).
#pragma once

#include <string_view>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

// All forwards, then all fused backwards (v = 1).
Schedule make_gpipe(const Problem& problem);
// Device r: p-r-1 warm-up F, then F/BW pairs, then the remaining BW (v = 1).
Schedule make_1f1b(const Problem& problem);
// Megatron's interleaved 1F1B, v >= 2 chunks, interleaved placement; m not a multiple of p runs in
// PyTorch's flexible rounds of m / max(1, m / p) microbatches.
Schedule make_1f1b_interleaved(const Problem& problem);
// Interleaved zero bubble (PyTorch's ScheduleInterleavedZeroBubble): the interleaved order with B
// and W split, one warm-up forward per hop, device r's Ws deferred by r backwards.
Schedule make_zb_interleaved(const Problem& problem);
// ZB-H1: 1F1B with B and W split, W deferred by r on device r (v = 1). Memory p * M_B.
Schedule make_zb_h1(const Problem& problem);
// ZB-H2: 2(p-r-1) warm-up F, W deferred by 2r (v = 1). Memory (2p-1) * M_B.
Schedule make_zb_h2(const Problem& problem);
// The handcrafted ZB-V: 2 chunks per device in a V (vshape), zero bubble with equal costs at
// 1F1B's memory p * M_B.
Schedule make_zb_v_handcrafted(const Problem& problem);
// Interleaved 1F1B with Megatron's expert-parallel overlap (overlap_moe_expert_parallel_comm, its
// combined 1F1B): one more warm-up forward per device, then each steady-state forward and the
// backward after it as one overlapped pair (Action::overlap_next).
Schedule make_1f1b_interleaved_ep_overlap(const Problem& problem);
// DualPipeV (PyTorch's ScheduleDualPipeV): vshape, F&B pairs overlapped in the steady state,
// m >= 2p.
Schedule make_dualpipe_v(const Problem& problem);
// PipeOffload's group-interleaved order (gen_group_interleaved.cpp): interleaved placement, B and
// W split, microbatches in groups of `group_size` (1..p): p is GIS, ceil(p/2) GIS-H (the order po-h
// and po-f offload from), 1 PipeOffload's uniformly repeating order. `name` goes into errors and
// the schedule.
Schedule make_group_interleaved(const Problem& problem, int group_size, std::string_view name);
// DualPipe (DeepSeek-V3): bidirectional placement (two model copies), half the microbatches each
// way, the same F&B pairing; p even, m even and >= 2p.
Schedule make_dualpipe(const Problem& problem);

}  // namespace zb
