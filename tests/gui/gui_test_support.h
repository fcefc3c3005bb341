// Helpers shared by the zbview tests: problems, evaluated schedules and hand-made traces.
#pragma once

#include <string>
#include <vector>

#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/problem_spec.h"
#include "sim/core/trace.h"
#include "tests/testing/problems.h"

namespace zb::view::testing {

using zb::testing::uniform_spec;

inline Trace evaluated(const std::string& name, const ProblemSpec& spec) {
  const Problem problem = spec.build();
  return evaluate(problem, generate(GeneratorRegistry::with_builtins(), name, problem));
}

inline Span compute_span(int device, Pass pass, int stage, int microbatch, double start, double end, int chunk = 0) {
  Span span;
  span.device = device;
  span.stream = Stream::compute;
  span.pass = pass;
  span.stage = stage;
  span.microbatch = microbatch;
  span.chunk = chunk;
  span.start = start;
  span.end = end;
  return span;
}

// An offload (O) or reload (L) on the device's copy engine.
inline Span copy_span(int device, Pass pass, int stage, int microbatch, double start, double end, int chunk = 0) {
  Span span = compute_span(device, pass, stage, microbatch, start, end, chunk);
  span.stream = Stream::copy;
  return span;
}

// PipeOffload's po-h at unit costs, p = 4, m = 8, two chunks, copies of 1: the zbsim simulate
// example of the offload passes.
inline ProblemSpec offload_spec() {
  ProblemSpec spec = uniform_spec(4, 8, 1, 1, 1, 0, 2);
  spec.t_offload = {1};
  return spec;
}

// Two devices, F and BW of one microbatch, with a gap on each device:
// d0: F0 [0,1]        BW0 [4,6]      d1:      F0 [1,2] BW0 [2,4]
inline Trace tiny_trace() {
  Trace trace;
  trace.devices = 2;
  trace.meta.schedule = "tiny";
  trace.meta.engine = "eval";
  trace.meta.time_unit = TimeUnit::ms;
  trace.spans = {compute_span(0, Pass::F, 0, 0, 0, 1), compute_span(1, Pass::F, 1, 0, 1, 2),
                 compute_span(1, Pass::BW, 1, 0, 2, 4), compute_span(0, Pass::BW, 0, 0, 4, 6)};
  trace.memory = {{{0, 1}, {6, 0}}, {{1, 1}, {4, 0}}};
  trace.metrics = compute_metrics(trace, 3);
  return trace;
}

using zb::testing::source_path;

}  // namespace zb::view::testing
