// Building test problems tersely, shared by every test suite.
#pragma once

#include <string>

#include "sim/core/generators/generator_registry.h"
#include "sim/core/problem_spec.h"
#include "sim/formats/pytorch_csv.h"

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

// Two chunks per device in a V with per-chunk costs (ProblemSpec's scalars are per device and
// split over the chunks, so they are doubled here); memory the defaults (a chunk F holds M_B/2).
inline ProblemSpec v_spec(int p, int m, double f, double b, double w, double tcomm = 0) {
  ProblemSpec spec = uniform_spec(p, m, 2 * f, 2 * b, 2 * w, tcomm, 2);
  spec.placement = Placement::vshape;
  return spec;
}

inline Problem v_problem(int p, int m, double f, double b, double w, double tcomm = 0) {
  return v_spec(p, m, f, b, w, tcomm).build();
}

// Random per-stage costs for every stage of `spec` (p x chunks), drawn t_f, t_b, t_w per stage in
// turn from `cost`, so a seeded test gets the same problems every run.
template <typename Rng, typename Distribution>
void draw_stage_costs(ProblemSpec& spec, Rng& rng, Distribution& cost) {
  spec.t_f.clear();
  spec.t_b.clear();
  spec.t_w.clear();
  for (int s = 0; s < spec.devices * spec.chunks; ++s) {
    spec.t_f.push_back(cost(rng));
    spec.t_b.push_back(cost(rng));
    spec.t_w.push_back(cost(rng));
  }
}

// `spec` reshaped for a generator: one chunk for single-chunk generators, `chunks` for multi-chunk
// ones (a generator made for the V or bidirectional placement always gets 2), the placement it
// is made for, and a copy time for those that offload (po-h, po-f) when it has none: half of t_f.
inline ProblemSpec generator_spec(const GeneratorInfo& info, ProblemSpec spec, int chunks = 2) {
  if (spec.t_offload.empty() && !spec.t_f.empty()) spec.t_offload = {spec.t_f.front() / 2};
  if (info.chunks == ChunkSupport::single) chunks = 1;
  if (info.placement == Placement::vshape || info.placement == Placement::bidirectional) chunks = 2;
  spec.chunks = chunks;
  spec.placement = info.placement;
  return spec;
}

// The shape an imported PyTorch schedule states, with equal per-device costs.
inline ProblemSpec imported_spec(const ImportedSchedule& imported, double tf = 1, double tb = 1, double tw = 1,
                                 double tcomm = 0) {
  ProblemSpec spec = uniform_spec(imported.devices, imported.microbatches, tf, tb, tw, tcomm, imported.chunks);
  spec.placement = imported.placement;
  return spec;
}

inline std::string source_path(const std::string& relative) { return std::string(ZB_SOURCE_DIR) + "/" + relative; }

}  // namespace zb::testing
