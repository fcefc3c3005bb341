// A measured trace against a simulated one (zbsim compare-trace): per-device spans, compute time and
// bubble, the makespan, span and bubble rate, as differences in ms and %; and the per-stage costs
// the measured trace shows, as the flags that simulate it.
#pragma once

#include <string>
#include <vector>

#include "sim/app/catalog/result_table.h"
#include "sim/core/trace.h"

namespace zb::cli {

// One quantity: measured and simulated in ms (a bubble rate as a fraction), difference = measured
// - simulated, relative = difference / simulated (0 when simulated is 0).
struct Difference {
  std::string metric;  // "device_span", "busy", "bubble_rate" (per device); "span", "makespan", "bubble_rate"
  int device = -1;     // -1: the whole trace
  double measured = 0, simulated = 0;
  double difference() const { return measured - simulated; }
  double relative() const { return simulated != 0 ? (measured - simulated) / simulated : 0.0; }
};

struct TraceComparison {
  std::string measured_label, simulated_label;
  int devices = 0;
  std::vector<Difference> rows;  // per device: device_span, busy, bubble_rate; then span, makespan, bubble_rate
  std::string measured_costs;    // measured_cost_flags(measured)
};

// Both traces in ms whatever their time unit. The two must have the same number of devices and
// every device a compute span in each; otherwise InputError naming the labels.
TraceComparison compare_traces(const Trace& measured, const std::string& measured_label, const Trace& simulated,
                               const std::string& simulated_label);

// Per stage, the median duration of each pass in ms, as zbsim's cost flags (per-stage lists, in
// stage order): "--tf 1.2,1.3 --tb 2.1,2.0 --tw 1.0,1.1"; a run of full backwards gives its
// backward as --tb with "--tw 0". Empty when a stage lacks a pass the others have.
std::string measured_cost_flags(const Trace& measured);

std::string comparison_text(const TraceComparison& comparison, Format format);

}  // namespace zb::cli
