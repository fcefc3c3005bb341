// PyTorch pipeline schedule CSV (torch.distributed.pipelining): one row per rank, "{stage}{op}{mb}".
#pragma once

#include <string>
#include <string_view>

#include "sim/core/problem.h"
#include "sim/formats/pytorch_ir.h"
#include "sim/core/schedule.h"

namespace zb {

// PyTorch's two CSV forms: compute actions only (what _load_csv reads by default, and what
// torchtitan's pipeline_parallel_schedule_csv takes), or with the runtime's communication and
// FSDP actions (what _PipelineScheduleRuntime._dump_csv writes by default).
enum class PytorchCsvForm { compute_only, compute_comms };

// A schedule read from PyTorch's CSV with the shape it implies.
struct ImportedSchedule {
  Schedule schedule;
  int devices = 0;
  int chunks = 1;
  int microbatches = 0;
  Placement placement = Placement::linear;
  PytorchCsvForm form = PytorchCsvForm::compute_only;
  PtCommCounts comms;  // compute_comms: what beside compute the file holds
};

// Reads both letter conventions: I is our B; B is our B when the same stage and microbatch has a
// W, otherwise our BW. "(a;b)OVERLAP_F_B" becomes an overlapped pair (Action::overlap_next);
// empty cells are idle. SEND/RECV cells are checked (check_transfer_points), UNSHARD, RESHARD and
// REDUCE_GRAD counted; the schedule keeps the compute actions in row order.
ImportedSchedule parse_pytorch_csv(std::string_view text, std::string_view source);

// Writes the newer convention: F, I (our B), W, B (our BW), "(a;b)OVERLAP_F_B" for a pair; with
// compute_comms, lowered as PyTorch's runtime lowers it (lower_to_compute_comms).
std::string to_pytorch_csv(const Problem& problem, const Schedule& schedule,
                           PytorchCsvForm form = PytorchCsvForm::compute_only);

// One line on what a compute_comms file held beside compute ("" for compute-only).
std::string describe_comms(const ImportedSchedule& imported);

}  // namespace zb
