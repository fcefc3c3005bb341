// Measured traces of PyTorch's pipeline runtime as torch.profiler writes them (export_chrome_trace,
// one file per rank), every schedule action a user annotation "PP:{action}" (0F3, 1I2, 1W2, 0B1,
// 1SEND_F0, 1RECV_B0, (0F1;1I0)OVERLAP_F_B), read into our Trace (docs/design.md section 7,
// "Measured traces from PyTorch"). Two shapes exist: Kineto's (an object with "traceEvents" and
// "schemaVersion"; times on one clock for all ranks) and the legacy profiler's, which torch builds
// without Kineto (Debian's python3-torch) write: a bare array of events, times in us from that
// process's profile start.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/trace.h"

namespace zb {

// One annotated action of one rank's file, with the file's times.
struct ProfiledAction {
  std::string label;  // the annotation without "PP:", for messages
  Stream stream = Stream::compute;
  // PyTorch's letter: F, I (input gradient), W, B (full backward; or, in older runtimes, the input
  // gradient when the same stage and microbatch also has a W). Send/recv: F or B, the message's
  // direction.
  char op = 'F';
  std::int32_t stage = 0;  // the stage that runs the action (send/recv: the stage that posts it)
  std::int32_t microbatch = 0;
  bool overlap_next = false;  // the first part of an OVERLAP_F_B block
  std::int64_t start_ns = 0, end_ns = 0;
};

// What one rank's file holds.
struct ProfiledRank {
  std::string source;
  // Kineto: distributedInfo's rank and world size. Legacy files carry neither: the rank is the
  // smallest stage the file runs (rank r holds stage r under the linear, looped and V placements)
  // and the world size is left to the other files (0).
  int rank = 0;
  int world_size = 0;
  bool shared_clock = false;  // Kineto: one clock for every rank; legacy: each file from its own start
  std::vector<ProfiledAction> actions;
  int fsdp_actions = 0;  // UNSHARD, RESHARD, REDUCE_GRAD: accepted and counted, not drawn
};

// Recognition by content: a JSON array of trace events (the legacy profiler), or an object with a
// "traceEvents" array and "schemaVersion" or "distributedInfo" (Kineto; our own Chrome trace writer
// writes neither).
bool is_torch_profiler_trace(const nlohmann::json& document);

// One rank's file. Events other than "PP:" complete events are ignored; a malformed "PP:" label,
// time or duration, or no "PP:" event at all, throws InputError naming `source`, the event and the
// value. When a Kineto file has device-side annotations (category "gpu_user_annotation") those are
// used, since they time the device's work, else the host-side ones.
ProfiledRank read_profiled_rank(const nlohmann::json& document, std::string_view source);

// One "PP:" label (without the prefix) timed from `start` to `end` ns: its action, or the two
// halves of an overlapped block, appended to `rank`; a malformed label throws InputError naming
// `context`. Every reader of PyTorch's labels (torch.profiler, Nsight Systems) goes through it.
void add_labelled_action(std::string_view label, std::int64_t start, std::int64_t end, std::string_view context,
                         ProfiledRank& rank);

// A file without distributedInfo: the rank is the smallest stage it runs (rank r holds stage r
// under the linear, looped and V placements); InputError when it runs no compute action.
void number_rank_by_its_stages(ProfiledRank& rank);

// The ranks of one run (any order, each rank once) as one trace: a device per rank, stages as
// PyTorch numbers them, chunk = the stage's index among its rank's stages, times in ms from the
// earliest span, engine "torch.profiler", work = the busiest device's compute time. Legacy files
// are aligned at their profile starts. An action seen twice (a profile of more than one step), a
// stage on two ranks, a rank given twice, ranks that disagree on the world size or on the format
// throw InputError naming the files.
Trace profiled_trace(std::span<const ProfiledRank> ranks);

// read_file, parse_json, read_profiled_rank per path, then profiled_trace.
Trace read_torch_profiler_files(const std::vector<std::string>& paths);

}  // namespace zb
