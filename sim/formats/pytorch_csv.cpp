// Import and export of PyTorch's pipeline schedule CSV (torch.distributed.pipelining).
#include "sim/formats/pytorch_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "sim/support/error.h"
#include "sim/support/text_trim.h"

namespace zb {

namespace {

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
    const std::string_view line = trim_blanks(text.substr(line_start, line_end - line_start));
    line_start = line_end + 1;
    ++line_number;
    if (line.empty()) continue;
    auto& row = rows.emplace_back();
    std::size_t cell_start = 0;
    int column = 0;
    while (cell_start <= line.size()) {
      const auto comma = std::min(line.find(',', cell_start), line.size());
      const std::string_view cell = trim_blanks(line.substr(cell_start, comma - cell_start));
      cell_start = comma + 1;
      ++column;
      if (cell.empty()) continue;  // an idle slot
      row.push_back(parse_pt_cell(cell, fmt::format("{}:{}: column {}", source, line_number, column)));
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
  // PyTorch's stages are one model's, each microbatch through all of them in order: a cell of the
  // up copy would read as a stage after the down copy's last (a V), another schedule.
  if (problem.placement == Placement::bidirectional) {
    throw InputError(fmt::format("schedule '{}': PyTorch pipeline CSV cannot express placement bidirectional (two "
                                 "model copies, half the microbatches each way: PyTorch runs every microbatch through "
                                 "one model's stages in order); use the text or JSON form",
                                 schedule.name));
  }
  if (has_copies(schedule)) {
    throw InputError(fmt::format("schedule '{}': PyTorch pipeline CSV has no action for activation offload and reload "
                                 "(O, L); use the text or JSON form",
                                 schedule.name));
  }
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
