// Building test problems tersely, shared by every test suite.
#pragma once

#include <string>

#include "sim/schedule/generator_registry.h"
#include "sim/schedule/problem_spec.h"

namespace zb::testing {

// Equal per-device costs, v = 1 unless given; memory in units of M_B (the defaults).
inline ProblemSpec uniform_spec(int p, int m, double tf = 1, double tb = 1, double tw = 1, double tcomm = 0,
                                int chunks = 1) {
  ProblemSpec spec;
  spec.devices = p;
  spec.microbatches = m;
  spec.chunks = chunks;
  spec.t_f = {tf};
  spec.t_b = {tb};
  spec.t_w = {tw};
  spec.t_comm = {tcomm};
  return spec;
}

inline Problem uniform_problem(int p, int m, double tf, double tb, double tw, double tcomm = 0, int chunks = 1) {
  return uniform_spec(p, m, tf, tb, tw, tcomm, chunks).build();
}

// `spec` reshaped for a generator: one chunk for single-chunk generators, `chunks` for multi-chunk
// ones (a generator made for the V placement always gets 2), and the placement it is made for.
inline ProblemSpec generator_spec(const GeneratorInfo& info, ProblemSpec spec, int chunks = 2) {
  if (info.chunks == ChunkSupport::single) chunks = 1;
  if (info.placement == Placement::vshape) chunks = 2;
  spec.chunks = chunks;
  spec.placement = info.placement;
  return spec;
}

inline std::string source_path(const std::string& relative) { return std::string(ZB_SOURCE_DIR) + "/" + relative; }

}  // namespace zb::testing
