// Nsight Systems reports as `nsys export --type sqlite` writes them: NVTX ranges per thread, CUDA
// runtime calls and GPU kernels per device, read into a measured trace of PyTorch's pipeline runtime
// when its actions carry "PP:" labels (record_function under torch.autograd.profiler.emit_nvtx, or
// NVTX ranges of one's own). Schema versions 2.x and 3.x (tests/data/nsys holds one of each).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/formats/torch_profiler_trace.h"

namespace zb {

// A push/pop or start/end NVTX range of one thread. Times in ns on the report's clock.
struct NsysRange {
  std::string text;
  std::int64_t start_ns = 0, end_ns = 0;
  std::int64_t pid = 0, tid = 0;
};

// A GPU kernel, with the correlation id of the runtime call that launched it.
struct NsysKernel {
  std::string name;
  std::int64_t start_ns = 0, end_ns = 0;
  int device = 0;
  int stream = 0;
  std::int64_t correlation = 0;
  std::int64_t pid = 0;
};

// A CUDA runtime API call (cudaLaunchKernel, cudaMemcpyAsync, ...) of one thread.
struct NsysRuntimeCall {
  std::int64_t start_ns = 0, end_ns = 0;
  std::int64_t pid = 0, tid = 0;
  std::int64_t correlation = 0;
};

struct NsysReport {
  std::string source;
  std::string nsys_version;    // EXPORT_PRODUCT_VERSION, e.g. "2024.5.1.113"
  std::string schema_version;  // EXPORT_SCHEMA_VERSION, e.g. "3.13.2"
  std::vector<NsysRange> ranges;  // by start time
  std::vector<NsysKernel> kernels;
  std::vector<NsysRuntimeCall> runtime_calls;
};

// Whether a file begins as an SQLite database does ("SQLite format 3\0").
bool is_sqlite_file(std::string_view first_bytes);
// Whether `path` is an SQLite file (an Nsight Systems export), from its first bytes. Only a regular
// file can be (SQLite opens by path and seeks): anything else (a FIFO, a terminal, /dev/stdin) is
// not opened here, so that the caller's one read of it gets all it holds.
bool is_sqlite_path(const std::string& path);

// Reads the report read-only: the database is opened immutable and never written, only the tables
// it needs are read, and each must be a table (not a view: a file's own SQL is never run). Missing
// NVTX or kernel tables leave those lists empty (nsys writes a table only when it recorded
// something). A file that is no SQLite database, or no Nsight Systems export, throws InputError
// naming `path`.
NsysReport read_nsys_report(const std::string& path);

// The report's "PP:" ranges as ranks of a pipeline run, one per process (a report of a launcher
// holds every rank it started). An action is timed by the GPU kernels it launched (from the first
// one's start to the last one's end; launched: by a runtime call of its thread within the range)
// when there are any, else by the range itself. Throws InputError naming the source when no range
// carries a "PP:" label.
std::vector<ProfiledRank> nsys_profiled_ranks(const NsysReport& report);

}  // namespace zb
