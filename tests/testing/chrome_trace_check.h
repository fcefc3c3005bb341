// A structural reader of our Chrome traces that applies the consumers' rules: slices on one thread
// must nest (Perfetto and DevTools build a stack per thread), and a flow point binds to a slice of
// its thread by equal category, pid, tid and ts (DevTools' FlowsHandler) which must also be the
// deepest slice open at that ts (Perfetto's FlowTracker binds to the top of the thread's stack).
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace zb::testing {

struct ChromeTraceCheck {
  int slices = 0;
  // Counted once as Perfetto reads the times and once as DevTools does.
  int partial_overlaps = 0;   // two slices of a thread where one starts inside the other and ends after it
  int unintended_nesting = 0; // a slice inside another that is not an overlapped pair's block
  int flows = 0;              // flow ids
  int flow_points = 0;
  int unbound_points = 0;     // no slice with the point's category, pid, tid and ts, or not the deepest open
  int broken_flows = 0;       // not s, t..., f with one category and name, in time order
  std::string first_problem;
};

inline ChromeTraceCheck check_chrome_trace(const nlohmann::json& file) {
  struct Slice {
    long long start, end;  // as Perfetto reads them: whole ns, each field rounded
    std::string cat;
    double start_us, end_us;  // as DevTools reads them: ts + dur in double microseconds
  };
  auto ns = [](double us) { return std::llround(us * 1000.0); };
  ChromeTraceCheck check;
  std::map<std::pair<long long, long long>, std::vector<Slice>> threads;
  for (const auto& event : file.at("traceEvents")) {
    if (event.at("ph") != "X") continue;
    const double ts = event.at("ts").get<double>(), dur = event.at("dur").get<double>();
    const long long start = ns(ts);
    threads[{event.at("pid").get<long long>(), event.at("tid").get<long long>()}].push_back(
        {start, start + ns(dur), event.value("cat", ""), ts, ts + dur});
    ++check.slices;
  }
  // The stack check, once on Perfetto's ns and once on DevTools' doubles.
  auto nest = [&](auto start_of, auto end_of, std::map<std::pair<long long, long long>, std::vector<Slice>> sorted) {
    for (auto& [key, slices] : sorted) {
      std::sort(slices.begin(), slices.end(), [&](const Slice& a, const Slice& b) {
        return start_of(a) != start_of(b) ? start_of(a) < start_of(b) : end_of(a) > end_of(b);
      });
      std::vector<const Slice*> stack;
      for (const Slice& slice : slices) {
        while (!stack.empty() && end_of(*stack.back()) <= start_of(slice)) stack.pop_back();
        if (!stack.empty()) {
          const Slice& outer = *stack.back();
          if (end_of(slice) > end_of(outer)) {
            if (check.first_problem.empty()) {
              check.first_problem = "partial overlap on pid " + std::to_string(key.first) + " tid " +
                                    std::to_string(key.second) + " at " + std::to_string(slice.start) + " ns";
            }
            ++check.partial_overlaps;
            continue;
          }
          if (outer.cat != "overlap") {
            if (check.first_problem.empty()) {
              check.first_problem = "nesting on pid " + std::to_string(key.first) + " tid " + std::to_string(key.second) +
                                    " at " + std::to_string(slice.start) + " ns";
            }
            ++check.unintended_nesting;
          }
        }
        stack.push_back(&slice);
      }
    }
  };
  nest([](const Slice& s) { return s.start; }, [](const Slice& s) { return s.end; }, threads);
  nest([](const Slice& s) { return s.start_us; }, [](const Slice& s) { return s.end_us; }, threads);
  struct Point {
    std::string ph, cat, name;
    long long ts;
  };
  std::map<long long, std::vector<Point>> flows;
  for (const auto& event : file.at("traceEvents")) {
    const std::string ph = event.at("ph");
    if (ph != "s" && ph != "t" && ph != "f") continue;
    ++check.flow_points;
    const long long ts = ns(event.at("ts").get<double>());
    const std::string cat = event.value("cat", "");
    flows[event.at("id").get<long long>()].push_back({ph, cat, event.value("name", ""), ts});
    const auto it = threads.find({event.at("pid").get<long long>(), event.at("tid").get<long long>()});
    const Slice* equal = nullptr;    // DevTools: same category and ts
    const Slice* deepest = nullptr;  // Perfetto: latest start open at ts, the shortest of those
    if (it != threads.end()) {
      for (const Slice& slice : it->second) {
        if (slice.start == ts && slice.cat == cat) equal = &slice;
        if (slice.start <= ts && (ts < slice.end || slice.start == ts)) {
          if (deepest == nullptr || slice.start > deepest->start ||
              (slice.start == deepest->start && slice.end < deepest->end)) {
            deepest = &slice;
          }
        }
      }
    }
    if (equal == nullptr || equal != deepest) ++check.unbound_points;
  }
  for (const auto& [id, points] : flows) {
    ++check.flows;
    bool ok = points.size() >= 2 && points.front().ph == "s" && points.back().ph == "f";
    for (std::size_t k = 0; ok && k < points.size(); ++k) {
      ok = points[k].cat == points.front().cat && points[k].name == points.front().name &&
           (k == 0 || (points[k].ts >= points[k - 1].ts && points[k].ph != "s")) &&
           (k + 1 == points.size() || points[k].ph != "f");
    }
    if (!ok) ++check.broken_flows;
  }
  return check;
}

// What every trace we write must satisfy: no slices partly overlapping or wrongly nested on a
// thread, every flow point bound, every flow well formed.
inline void expect_readable_as_intended(const ChromeTraceCheck& check) {
  EXPECT_EQ(check.partial_overlaps, 0) << check.first_problem;
  EXPECT_EQ(check.unintended_nesting, 0) << check.first_problem;
  EXPECT_EQ(check.unbound_points, 0);
  EXPECT_EQ(check.broken_flows, 0);
}

}  // namespace zb::testing
