// Shared helpers of the executor tests: small problems, small models, runs against the reference.
#pragma once

#include <string>

#include "exec/cpu_backend.h"
#include "exec/engine.h"
#include "exec/reference.h"
#include "sim/schedule/problem.h"
#include "sim/schedule/schedule.h"

namespace zb::exec::test {

// Unit costs, default memory deltas, the given shape.
zb::Problem unit_problem(int p, int m, int chunks = 1,
                         zb::Placement placement = zb::Placement::linear);

// A model small enough for CI: `layers` blocks, hidden 16, microbatch 3.
ExecOptions small_options(int layers, int steps = 3);

zb::Schedule make(const std::string& generator, const zb::Problem& problem);

// Runs the single-device reference with the same model, optimizer and injection.
ReferenceResult reference_for(const ExecOptions& options, const zb::Problem& problem);

}  // namespace zb::exec::test
