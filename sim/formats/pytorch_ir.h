// PyTorch's pipeline schedule IR (torch.distributed.pipelining's _Action): compute actions, the
// runtime's transfer points (SEND/RECV), FSDP's UNSHARD/RESHARD and the gradient reduction
// REDUCE_GRAD, one row of actions per rank. The CSV reader and writer speak it; the lowering to
// the runtime's "compute_comms" form and the check of a file's transfer points work on it.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace zb {

enum class PtOp { F, I, B, W, overlap_f_b, send_f, recv_f, send_b, recv_b, unshard, reshard, reduce_grad };

// The op's name as PyTorch writes it ("F", "SEND_F", "OVERLAP_F_B", ...).
std::string_view pt_op_name(PtOp op);
bool is_compute(PtOp op);       // F, I, B, W (an overlap is a composite of these)
bool is_transfer(PtOp op);      // SEND_F, RECV_F, SEND_B, RECV_B
bool takes_microbatch(PtOp op); // compute and transfers; UNSHARD, RESHARD, REDUCE_GRAD do not

struct PtAction {
  int stage = 0;
  PtOp op = PtOp::F;
  int microbatch = -1;          // -1: none (UNSHARD, RESHARD, REDUCE_GRAD, a composite)
  std::vector<PtAction> parts;  // the compute actions of an OVERLAP_F_B, in order

  friend bool operator==(const PtAction&, const PtAction&) = default;
};

// A plain (non-composite) action.
inline PtAction pt_action(int stage, PtOp op, int microbatch = -1) {
  PtAction action;
  action.stage = stage;
  action.op = op;
  action.microbatch = microbatch;
  return action;
}

using PtRows = std::vector<std::vector<PtAction>>;  // one row per rank

// "0F3", "1SEND_F0", "0UNSHARD", "(0F7;7B3)OVERLAP_F_B".
std::string to_cell(const PtAction& action);

// The one reader of a cell (a CSV cell, a profiler label after "PP:"): {stage}{op}{microbatch},
// {stage}{op} for UNSHARD, RESHARD and REDUCE_GRAD, or (a;b)OVERLAP_F_B of two compute actions.
// Throws InputError naming `context` and the cell.
PtAction parse_pt_cell(std::string_view cell, std::string_view context);

// Where each stage runs: rank_of_stage(stage).
using RankOfStage = std::function<int(int)>;

// The runtime's lowering of a compute-only schedule, as PyTorch's _PipelineScheduleRuntime does
// before it runs (and writes with _dump_csv): per rank, UNSHARD the next three stages it will
// compute and RESHARD the others; REDUCE_GRAD after a stage's last B or W; then, rank by rank in
// rounds, each rank's next action once its inputs are in place, with the SEND after the action
// that produces a tensor for another rank and the matching RECV on that rank. Throws InputError
// if the compute order cannot make progress.
PtRows lower_to_compute_comms(const PtRows& compute_rows, int stages, int microbatches,
                              const RankOfStage& rank_of_stage);

// What a compute_comms file holds beside compute.
struct PtCommCounts {
  int transfer_points = 0;  // SEND and RECV cells, each checked
  int unshards = 0;
  int reshards = 0;
  int reduce_grads = 0;
  bool any() const { return transfer_points + unshards + reshards + reduce_grads > 0; }
};

// Checks a file's transfer points against its compute and our channels: each SEND/RECV sits on
// the rank of its stage, after (SEND) or before (RECV) the compute it belongs to, once; when a
// file has any, every tensor crossing ranks has both; for each pair of ranks the sends are posted
// in the order the receiver posts its receives (NCCL matches point-to-point messages in order);
// and the ranks can run their rows to the end, a compute waiting for its tensor's SEND. Counts
// the rest (UNSHARD, RESHARD, REDUCE_GRAD: accepted, not timed). Throws InputError naming
// `source`, the rank and the cell.
PtCommCounts check_transfer_points(const PtRows& rows, int stages, int microbatches,
                                   const RankOfStage& rank_of_stage, std::string_view source);

}  // namespace zb
