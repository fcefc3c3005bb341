// Shared helpers of the executor tests: small problems, small models, runs against the reference.
#pragma once

#include <functional>
#include <future>
#include <string>
#include <vector>

#include "exec/cpu/cpu_backend.h"
#include "exec/runtime/engine.h"
#include "exec/runtime/reference.h"
#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb::exec::test {

// Unit costs, default memory deltas, the given shape.
zb::Problem unit_problem(int p, int m, int chunks = 1,
                         zb::Placement placement = zb::Placement::linear);

// A model small enough for CI: `layers` blocks, hidden 16, microbatch 3.
ExecOptions small_options(int layers, int steps = 3);

zb::Schedule make(const std::string& generator, const zb::Problem& problem);

// Runs the single-device reference with the same model, optimizer and injection.
ReferenceResult reference_for(const ExecOptions& options, const zb::Problem& problem);

// The ranks of a multi-process run played by threads: body(rank) on `world` threads at once,
// results in rank order (the transport: tests/exec/thread_transport.h).
template <typename Result>
std::vector<Result> on_ranks(int world, const std::function<Result(int rank)>& body) {
  std::vector<std::future<Result>> futures;
  for (int r = 0; r < world; ++r) futures.push_back(std::async(std::launch::async, body, r));
  std::vector<Result> results;
  for (auto& f : futures) results.push_back(f.get());
  return results;
}

}  // namespace zb::exec::test
