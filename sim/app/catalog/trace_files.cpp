// Trace files by content (see trace_files.h).
#include "sim/app/catalog/trace_files.h"

#include <fmt/format.h>

#include <iterator>
#include <nlohmann/json.hpp>

#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/support/json_text.h"
#include "sim/formats/nsys_report.h"
#include "sim/formats/torch_profiler_trace.h"
#include "sim/formats/trace_json.h"

namespace zb::catalog {

TraceFileKind trace_file_kind(const nlohmann::json& document) {
  if (document.is_object() && document.contains("spans")) return TraceFileKind::ours;
  if (is_torch_profiler_trace(document)) return TraceFileKind::torch_profiler;
  return TraceFileKind::other;
}

Trace read_trace_files(const std::vector<std::string>& paths) {
  if (paths.empty()) throw InputError("no trace file given");
  std::vector<ProfiledRank> ranks;
  bool nsys = false;
  for (const std::string& path : paths) {
    if (is_sqlite_path(path)) {
      std::vector<ProfiledRank> processes = nsys_profiled_ranks(read_nsys_report(path));
      ranks.insert(ranks.end(), std::make_move_iterator(processes.begin()), std::make_move_iterator(processes.end()));
      nsys = true;
      continue;
    }
    const nlohmann::json document = parse_json(read_file(path), path);
    switch (trace_file_kind(document)) {
      case TraceFileKind::ours:
        if (paths.size() > 1) {
          throw InputError(fmt::format("{}: a trace of ours holds every device: give it alone, not with {}", path,
                                       path == paths.front() ? paths.back() : paths.front()));
        }
        try {
          return trace_from_json(document, path);
        } catch (const nlohmann::json::exception& e) {
          throw InputError(fmt::format("{}: {}", path, e.what()));
        }
      case TraceFileKind::torch_profiler:
        ranks.push_back(read_profiled_rank(document, path));
        break;
      case TraceFileKind::other:
        throw InputError(fmt::format("{}: not a trace (neither our trace JSON with \"spans\", a torch.profiler "
                                     "trace with \"traceEvents\" nor an Nsight Systems SQLite export)", path));
    }
  }
  Trace trace = profiled_trace(ranks);
  if (nsys) trace.meta.engine = "nsys";
  return trace;
}

}  // namespace zb::catalog
