// PyTorch pipeline schedule CSV (torch.distributed.pipelining): one row per rank, "{stage}{op}{mb}".
#pragma once

#include <string>
#include <string_view>

#include "sim/schedule/problem.h"
#include "sim/schedule/schedule.h"

namespace zb {

// A schedule read from PyTorch's CSV with the shape it implies.
struct ImportedSchedule {
  Schedule schedule;
  int devices = 0;
  int chunks = 1;
  int microbatches = 0;
  Placement placement = Placement::linear;
};

// Reads both letter conventions: I is our B; B is our B when the same stage and microbatch has a
// W, otherwise our BW. "(a;b)OVERLAP_F_B" becomes an overlapped pair (Action::overlap_next);
// empty cells are idle.
ImportedSchedule parse_pytorch_csv(std::string_view text, std::string_view source);

// Writes the newer convention: F, I (our B), W, B (our BW), "(a;b)OVERLAP_F_B" for a pair.
std::string to_pytorch_csv(const Problem& problem, const Schedule& schedule);

}  // namespace zb
