// The zb-ilp model as plain data (columns, rows), built without any solver (docs/design.md section 6).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"
#include "sim/solver/detail/split_pass.h"

namespace zb {

// A mixed-integer linear program in row form, minimised.
struct LinearProgram {
  struct Column {
    std::string name;
    double lower = 0;
    double upper = 0;
    double objective = 0;
    bool integer = false;
  };
  struct Row {
    std::string name;
    double lower = 0;
    double upper = 0;
    std::vector<std::pair<int, double>> terms;  // (column, coefficient)
  };
  std::vector<Column> columns;
  std::vector<Row> rows;

  int add_column(std::string name, double lower, double upper, double objective, bool integer);
  void add_row(std::string name, double lower, double upper, std::vector<std::pair<int, double>> terms);
  // Largest violation of bounds, rows and integrality by `values` (0 when feasible).
  double max_violation(const std::vector<double>& values) const;
};

struct IlpModelOptions {
  double memory_limit = 0;      // absolute
  double incumbent_span = 0;    // U: the reference order's span
  // When > 0, only schedules with span <= search_span are searched (time windows, the span's
  // upper bound): U minus the time grid for a strict improvement. Otherwise U.
  double search_span = 0;
  double lower_bound = 0;       // valid bound on the span (column lower bound of the objective)
  // Per stage: how many actions of the reference order at its start (head) and end (tail) are
  // free to reorder; the rest keeps the reference order. head >= 3m means the full model.
  int free_head = 1 << 30;
  int free_tail = 0;
  // Add the 3-pass transitivity and chain-monotonicity cuts on order variables.
  bool order_cuts = true;
  // Add the positional rows: end >= first start + work ordered before; last end >= end + work after.
  bool positional_rows = true;
};

// The model plus what is needed to read a solution back into a schedule.
struct IlpModel {
  LinearProgram lp;
  int stages = 0;
  int microbatches = 0;
  bool decomposed = false;                  // some pairs fixed by the reference order
  std::vector<int> end_column;              // [(s * 3 + split_index(pass)) * m + i] -> column of its end time
  int span_column = -1;
  std::vector<double> first_start;          // c_s: start of F0 on stage s (fixed)
  std::vector<double> earliest_end;         // per pass, time windows used for the big-M
  std::vector<double> latest_end;
  std::vector<double> warm_start;           // column values of the reference order
  std::size_t order_pairs = 0;              // order variables (after window fixing)
  std::size_t fixed_by_windows = 0;         // pairs the time windows ordered without a variable
  // Some pass has no room between its earliest and latest end: no schedule of this model has a
  // span <= the search span (the model is left without rows).
  bool empty_windows = false;

  // Per stage, the relation of every pair that has a variable: key (a, b) with a < b as pass ids
  // (split_index(pass) * m + i) -> column; the variable is 1 iff a runs before b.
  std::vector<std::unordered_map<std::uint64_t, int>> order_column;

  int pass_id(Pass pass, int i) const { return split_index(pass) * microbatches + i; }
  int node(int s, Pass pass, int i) const { return (s * kSplitPassCount + split_index(pass)) * microbatches + i; }
};

// The ILP's order variables and memory rows are per stage, and a stage is a device only with one
// chunk per device: multi-chunk placements are refused here with that reason and where to go.
void require_one_chunk_per_device(const Problem& problem);

// Builds the model for `problem` (chunks = 1) warm-started from `reference`, a valid order that
// respects the memory limit and whose list-scheduled span is options.incumbent_span.
IlpModel build_ilp_model(const Problem& problem, const Schedule& reference, const IlpModelOptions& options);

// Reads a solution (column values) back into an order: per stage, passes sorted by end time,
// ties broken by the order variables.
Schedule ilp_solution_order(const IlpModel& model, const std::vector<double>& values);

}  // namespace zb
