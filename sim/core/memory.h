// The activation-memory rules every engine, solver and front end shares: what each pass adds or
// frees, and the one judgement of whether a device's peak is over the problem's limit.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/action.h"
#include "sim/core/problem.h"

namespace zb {

// F allocates its activations when it starts; B, W and BW free (or add) theirs when they end, so
// a device's memory never depends on another device's timing. An offload (O) frees what it copied
// when the copy ends; its reload (L) takes it back when the copy starts.
struct MemoryDelta {
  double at_start = 0;
  double at_end = 0;
  double net() const { return at_start + at_end; }
};

MemoryDelta memory_delta(const Problem& problem, Pass pass, int stage);

// A device whose peak exceeds the limit (the first such device).
struct OverLimit {
  int device = 0;
  double peak = 0;
  double limit = 0;      // absolute units
  std::string notation;  // "1p" when the limit was given as a multiple of p * M_B

  // "d0 peaks at 24 > limit 16 (2p)": the same words in every engine, sweep, zbview and zbexec.
  std::string reason() const;
};

// Whether a device holding `value` stays within `limit`: a relative tolerance of 1e-9 absorbs the
// rounding of summed deltas (a peak of exactly the limit fits). Solvers that decide as they build
// use this, so what they accept the judgement below never refuses.
inline bool fits_limit(double value, double limit) { return value <= limit * (1 + 1e-9); }

// The one over-limit judgement (fits_limit per device). nullopt when the problem has no limit or
// all fit.
std::optional<OverLimit> first_over_limit(const Problem& problem, const std::vector<double>& peaks);
// The same judgement against a given absolute limit (the solver tries limits of its own).
std::optional<OverLimit> first_over_limit(const std::vector<double>& peaks, double limit);

}  // namespace zb
