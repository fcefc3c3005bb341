// Helpers for the SimGrid engine tests: problems, span matching, comparison with the evaluator.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "sim/core/problem_spec.h"
#include "tests/testing/problems.h"
#include "sim/core/trace.h"

namespace zb::testing {

inline std::vector<Span> spans_of(const Trace& trace, bool compute) {
  std::vector<Span> out;
  for (const Span& span : trace.spans) {
    if ((span.stream == Stream::compute) == compute) out.push_back(span);
  }
  return out;
}

// Transfers in a canonical order (engines may record them in different orders).
inline std::vector<Span> sorted_transfers(const Trace& trace) {
  auto out = spans_of(trace, false);
  std::sort(out.begin(), out.end(), [](const Span& a, const Span& b) {
    return std::tuple(a.device, a.stream, a.step, a.stage, a.microbatch, a.pass) <
           std::tuple(b.device, b.stream, b.step, b.stage, b.microbatch, b.pass);
  });
  return out;
}

// Every span, memory point, step end and metric of `actual` equals `expected` within a relative
// tolerance (SimGrid accumulates its clock in steps, the evaluator adds directly: the last bits differ).
inline ::testing::AssertionResult same_trace(const Trace& expected, const Trace& actual, double relative = 1e-9) {
  const double last = expected.step_ends.empty() ? 0.0 : expected.step_ends.back();
  const double tolerance = relative * std::max({1.0, expected.metrics.makespan, last});
  auto close = [&](double a, double b) { return std::abs(a - b) <= tolerance; };
  auto describe = [](const Span& s) {
    return "d" + std::to_string(s.device) + " " + std::string(stream_name(s.stream)) + " " +
           std::string(pass_name(s.pass)) + std::to_string(s.microbatch) + " stage " + std::to_string(s.stage) + " [" +
           std::to_string(s.start) + ", " + std::to_string(s.end) + "]";
  };
  auto compare = [&](const std::vector<Span>& want, const std::vector<Span>& got,
                     const char* what) -> ::testing::AssertionResult {
    if (want.size() != got.size()) {
      return ::testing::AssertionFailure() << what << ": " << want.size() << " spans expected, " << got.size() << " got";
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
      const Span& a = want[i];
      const Span& b = got[i];
      if (a.device != b.device || a.stream != b.stream || a.pass != b.pass || a.stage != b.stage ||
          a.microbatch != b.microbatch || a.chunk != b.chunk || a.overlap_next != b.overlap_next || a.step != b.step ||
          !close(a.start, b.start) || !close(a.end, b.end)) {
        return ::testing::AssertionFailure() << what << " span " << i << ": expected " << describe(a) << ", got "
                                             << describe(b);
      }
    }
    return ::testing::AssertionSuccess();
  };
  if (auto r = compare(spans_of(expected, true), spans_of(actual, true), "compute"); !r) return r;
  if (auto r = compare(sorted_transfers(expected), sorted_transfers(actual), "transfer"); !r) return r;
  if (expected.memory.size() != actual.memory.size()) return ::testing::AssertionFailure() << "memory device count";
  for (std::size_t d = 0; d < expected.memory.size(); ++d) {
    if (expected.memory[d].size() != actual.memory[d].size()) {
      return ::testing::AssertionFailure() << "d" << d << " memory: " << expected.memory[d].size() << " points expected, "
                                           << actual.memory[d].size() << " got";
    }
    for (std::size_t i = 0; i < expected.memory[d].size(); ++i) {
      const auto& a = expected.memory[d][i];
      const auto& b = actual.memory[d][i];
      if (!close(a.time, b.time) || std::abs(a.value - b.value) > 1e-9 * std::max(1.0, std::abs(a.value))) {
        return ::testing::AssertionFailure() << "d" << d << " memory point " << i << ": expected (" << a.time << ", "
                                             << a.value << "), got (" << b.time << ", " << b.value << ")";
      }
    }
  }
  if (expected.step_ends.size() != actual.step_ends.size()) {
    return ::testing::AssertionFailure() << expected.step_ends.size() << " step ends expected, "
                                         << actual.step_ends.size() << " got";
  }
  for (std::size_t k = 0; k < expected.step_ends.size(); ++k) {
    if (!close(expected.step_ends[k], actual.step_ends[k])) {
      return ::testing::AssertionFailure() << "end of step " << k << ": expected " << expected.step_ends[k] << ", got "
                                           << actual.step_ends[k];
    }
  }
  const Metrics& a = expected.metrics;
  const Metrics& b = actual.metrics;
  // The bubble rate moves by at most d(span) / span.
  const double bubble_tolerance = 1e-9 + tolerance / std::max(1.0, a.span);
  if (!close(a.makespan, b.makespan) || !close(a.span, b.span) ||
      std::abs(a.bubble_rate - b.bubble_rate) > bubble_tolerance) {
    return ::testing::AssertionFailure() << "metrics: makespan " << a.makespan << " vs " << b.makespan << ", span "
                                         << a.span << " vs " << b.span;
  }
  for (std::size_t d = 0; d < a.peak_memory.size(); ++d) {
    if (std::abs(a.peak_memory[d] - b.peak_memory[d]) > 1e-9 * std::max(1.0, a.peak_memory[d]) ||
        !close(a.idle[d], b.idle[d])) {
      return ::testing::AssertionFailure() << "metrics of d" << d;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace zb::testing
