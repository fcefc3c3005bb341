// Import and export of PyTorch's pipeline schedule CSV (torch.distributed.pipelining).
#include "sim/schedule/pytorch_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "sim/schedule/error.h"
#include "sim/schedule/limits.h"

namespace zb {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

constexpr PtOp kCellOps[] = {PtOp::F,      PtOp::I,      PtOp::B,      PtOp::W,       PtOp::send_f,     PtOp::recv_f,
                             PtOp::send_b, PtOp::recv_b, PtOp::unshard, PtOp::reshard, PtOp::reduce_grad};

[[noreturn]] void bad_cell(std::string_view cell, std::string_view context) {
  throw InputError(fmt::format("{}: bad cell '{}': expected {{stage}}{{op}}{{microbatch}} like 0F3 or 1SEND_F0, "
                               "{{stage}}{{op}} like 0UNSHARD, or (a;b)OVERLAP_F_B",
                               context, excerpt(cell)));
}

// "12F3" -> {12, F, 3}; "1SEND_F0" -> {1, SEND_F, 0}; "0UNSHARD" -> {0, UNSHARD}.
PtAction parse_simple_cell(std::string_view cell, std::string_view context) {
  PtAction action;
  const auto* end = cell.data() + cell.size();
  auto [after_stage, ec] = std::from_chars(cell.data(), end, action.stage);
  if (ec != std::errc{} || after_stage == cell.data() || action.stage < 0) bad_cell(cell, context);
  std::string_view rest(after_stage, static_cast<std::size_t>(end - after_stage));
  const auto digits = rest.find_last_not_of("0123456789") + 1;  // 0 when rest is all digits
  const std::string_view name = rest.substr(0, digits);
  const std::string_view microbatch = rest.substr(digits);
  const auto* op = std::find_if(std::begin(kCellOps), std::end(kCellOps), [&](PtOp o) { return pt_op_name(o) == name; });
  if (op == std::end(kCellOps)) {
    if (name.empty()) bad_cell(cell, context);
    throw InputError(fmt::format("{}: cell '{}' has op '{}': expected F, I, B, W, SEND_F, RECV_F, SEND_B, RECV_B, "
                                 "UNSHARD, RESHARD or REDUCE_GRAD",
                                 context, excerpt(cell), excerpt(name)));
  }
  action.op = *op;
  if (takes_microbatch(action.op) != !microbatch.empty()) {
    throw InputError(fmt::format("{}: cell '{}': {} {}", context, excerpt(cell), name,
                                 takes_microbatch(action.op) ? "needs a microbatch" : "takes no microbatch"));
  }
  if (!microbatch.empty()) {
    auto [after_mb, ec2] = std::from_chars(microbatch.data(), microbatch.data() + microbatch.size(), action.microbatch);
    if (ec2 != std::errc{} || after_mb != microbatch.data() + microbatch.size()) bad_cell(cell, context);
  }
  // A stage or microbatch index past the action limit can only make a schedule over it (and
  // stage + 1 below must not overflow).
  if (action.stage >= kMaxActions / 3 || action.microbatch >= kMaxActions / 3) {
    throw InputError(fmt::format("{}: cell '{}': stage or microbatch over the limit of {:.0f}", context, excerpt(cell),
                                 kMaxActions / 3));
  }
  return action;
}

// A cell as written: one action, or "(0F7;7B3)OVERLAP_F_B", an overlapped pair in the order written.
PtAction parse_cell(std::string_view cell, std::string_view context) {
  if (cell.front() != '(') return parse_simple_cell(cell, context);
  const std::string_view suffix = pt_op_name(PtOp::overlap_f_b);
  const auto close = cell.find(')');
  const auto semicolon = cell.find(';');
  if (close == std::string_view::npos || semicolon > close || cell.substr(close + 1) != suffix ||
      cell.find(';', semicolon + 1) < close) {
    throw InputError(fmt::format("{}: bad composite cell '{}': expected (a;b){} like (0F7;7B3){} (zbsim overlaps "
                                 "pairs)",
                                 context, excerpt(cell), suffix, suffix));
  }
  PtAction pair = pt_action(-1, PtOp::overlap_f_b);
  for (const auto part : {cell.substr(1, semicolon - 1), cell.substr(semicolon + 1, close - semicolon - 1)}) {
    pair.parts.push_back(parse_simple_cell(trim(part), context));
    if (!is_compute(pair.parts.back().op)) {
      throw InputError(fmt::format("{}: composite cell '{}': only compute actions overlap", context, excerpt(cell)));
    }
  }
  return pair;
}

// Our action of a compute cell on the newer or older convention (see parse_pytorch_csv).
Action action_of(const PtAction& cell, int devices, const std::set<std::pair<int, int>>& has_w) {
  Pass pass = Pass::F;
  switch (cell.op) {
    case PtOp::I: pass = Pass::B; break;
    case PtOp::W: pass = Pass::W; break;
    // Older files write the input gradient as B (then a W follows); newer ones the full backward.
    case PtOp::B: pass = has_w.contains({cell.stage, cell.microbatch}) ? Pass::B : Pass::BW; break;
    default: break;
  }
  return {pass, cell.microbatch, cell.stage / devices};
}

// PyTorch's compute action for one of ours.
PtAction cell_of(const Problem& problem, int device, const Action& action) {
  const PtOp op = action.pass == Pass::F ? PtOp::F : action.pass == Pass::B ? PtOp::I : action.pass == Pass::W ? PtOp::W : PtOp::B;
  return pt_action(problem.stage_of(device, action.chunk), op, action.microbatch);
}

}  // namespace

ImportedSchedule parse_pytorch_csv(std::string_view text, std::string_view source) {
  PtRows rows;
  std::size_t line_start = 0;
  int line_number = 0;
  while (line_start < text.size()) {
    const auto line_end = std::min(text.find('\n', line_start), text.size());
    const std::string_view line = trim(text.substr(line_start, line_end - line_start));
    line_start = line_end + 1;
    ++line_number;
    if (line.empty()) continue;
    auto& row = rows.emplace_back();
    std::size_t cell_start = 0;
    int column = 0;
    while (cell_start <= line.size()) {
      const auto comma = std::min(line.find(',', cell_start), line.size());
      const std::string_view cell = trim(line.substr(cell_start, comma - cell_start));
      cell_start = comma + 1;
      ++column;
      if (cell.empty()) continue;  // an idle slot
      row.push_back(parse_cell(cell, fmt::format("{}:{}: column {}", source, line_number, column)));
    }
  }
  if (rows.empty()) throw InputError(fmt::format("{}: no rows (expected one row of cells per rank)", source));

  ImportedSchedule imported;
  imported.devices = static_cast<int>(rows.size());
  const int p = imported.devices;
  int stages = 0;
  std::set<std::pair<int, int>> has_w;  // (stage, microbatch) with a weight-gradient pass
  std::vector<std::set<int>> stages_of(p);
  for (int r = 0; r < p; ++r) {
    for (const PtAction& cell : rows[r]) {
      if (!is_compute(cell.op) && cell.op != PtOp::overlap_f_b) imported.form = PytorchCsvForm::compute_comms;
      for (const PtAction& compute : cell.op == PtOp::overlap_f_b ? cell.parts : std::vector<PtAction>{cell}) {
        if (!is_compute(compute.op)) continue;
        stages = std::max(stages, compute.stage + 1);
        imported.microbatches = std::max(imported.microbatches, compute.microbatch + 1);
        if (compute.op == PtOp::W) has_w.insert({compute.stage, compute.microbatch});
        stages_of[r].insert(compute.stage);
      }
    }
  }
  if (stages == 0) throw InputError(fmt::format("{}: no compute actions (F, I, B, W)", source));
  if (stages % p != 0) {
    throw InputError(fmt::format("{}: {} stages do not divide evenly over {} ranks", source, stages, p));
  }
  imported.chunks = stages / p;
  // Which placement puts each rank's stages where the file has them.
  Problem shape;
  shape.devices = p;
  shape.chunks = imported.chunks;
  auto fits = [&](Placement placement) {
    shape.placement = placement;
    for (int r = 0; r < p; ++r) {
      for (int stage : stages_of[r]) {
        if (shape.device_of_stage(stage) != r) return false;
      }
    }
    return true;
  };
  if (imported.chunks == 1) {
    imported.placement = Placement::linear;
  } else if (fits(Placement::interleaved)) {
    imported.placement = Placement::interleaved;
  } else if (imported.chunks == 2 && fits(Placement::vshape)) {
    imported.placement = Placement::vshape;
  } else {
    throw InputError(fmt::format("{}: the ranks' stages match neither a looped (interleaved) nor a V placement",
                                 source));
  }
  shape.placement = imported.placement;
  if (imported.form == PytorchCsvForm::compute_comms) {
    imported.comms = check_transfer_points(rows, stages, imported.microbatches,
                                           [&](int stage) { return shape.device_of_stage(stage); }, source);
  }
  imported.schedule.name = std::string(source);
  imported.schedule.placement = imported.placement;
  imported.schedule.chunks = imported.chunks;
  imported.schedule.devices.resize(p);
  for (int r = 0; r < p; ++r) {
    for (const PtAction& cell : rows[r]) {
      if (cell.op == PtOp::overlap_f_b) {
        Action first = action_of(cell.parts[0], p, has_w);
        first.overlap_next = true;
        imported.schedule.devices[r].push_back(first);
        imported.schedule.devices[r].push_back(action_of(cell.parts[1], p, has_w));
      } else if (is_compute(cell.op)) {
        imported.schedule.devices[r].push_back(action_of(cell, p, has_w));
      }
    }
  }
  return imported;
}

std::string to_pytorch_csv(const Problem& problem, const Schedule& schedule, PytorchCsvForm form) {
  PtRows rows(schedule.device_count());
  for (int d = 0; d < schedule.device_count(); ++d) {
    const auto& actions = schedule.devices[d];
    for (std::size_t i = 0; i < actions.size(); ++i) {
      if (actions[i].overlap_next && i + 1 < actions.size()) {
        PtAction pair = pt_action(-1, PtOp::overlap_f_b);
        pair.parts = {cell_of(problem, d, actions[i]), cell_of(problem, d, actions[i + 1])};
        rows[d].push_back(std::move(pair));
        ++i;
      } else {
        rows[d].push_back(cell_of(problem, d, actions[i]));
      }
    }
  }
  if (form == PytorchCsvForm::compute_comms) {
    rows = lower_to_compute_comms(rows, problem.stages(), problem.microbatches,
                                  [&](int stage) { return problem.device_of_stage(stage); });
  }
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i > 0) out += ',';
      out += to_cell(row[i]);
    }
    out += '\n';
  }
  return out;
}

std::string describe_comms(const ImportedSchedule& imported) {
  if (imported.form == PytorchCsvForm::compute_only) return "";
  const PtCommCounts& c = imported.comms;
  return fmt::format("PyTorch compute_comms CSV: {} SEND/RECV transfer points checked; {} UNSHARD, {} RESHARD, "
                     "{} REDUCE_GRAD accepted (not timed)",
                     c.transfer_points, c.unshards, c.reshards, c.reduce_grads);
}

}  // namespace zb
