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

struct RawCell {
  int stage = 0;
  char op = 'F';
  int microbatch = 0;
  bool overlap_next = false;  // the first of "(a;b)OVERLAP_F_B"
};

// PyTorch's name of an overlapped forward and full backward.
constexpr std::string_view kOverlapSuffix = "OVERLAP_F_B";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// "12F3" -> {12, 'F', 3}.
RawCell parse_cell(std::string_view cell, std::string_view context) {
  RawCell raw;
  const auto* begin = cell.data();
  const auto* end = cell.data() + cell.size();
  auto [after_stage, ec1] = std::from_chars(begin, end, raw.stage);
  if (ec1 != std::errc{} || after_stage == end) {
    throw InputError(fmt::format("{}: bad cell '{}': expected {{stage}}{{op}}{{microbatch}} like 0F3", context, excerpt(cell)));
  }
  raw.op = *after_stage;
  auto [after_mb, ec2] = std::from_chars(after_stage + 1, end, raw.microbatch);
  if (ec2 != std::errc{} || after_mb != end || raw.stage < 0 || raw.microbatch < 0) {
    throw InputError(fmt::format("{}: bad cell '{}': expected {{stage}}{{op}}{{microbatch}} like 0F3", context, excerpt(cell)));
  }
  // A stage or microbatch index past the action limit can only make a schedule over it (and
  // stage + 1 below must not overflow).
  if (raw.stage >= kMaxActions / 3 || raw.microbatch >= kMaxActions / 3) {
    throw InputError(fmt::format("{}: cell '{}': stage or microbatch over the limit of {:.0f}", context, excerpt(cell),
                                 kMaxActions / 3));
  }
  if (raw.op != 'F' && raw.op != 'B' && raw.op != 'I' && raw.op != 'W') {
    throw InputError(fmt::format("{}: cell '{}' has op '{}': only compute ops F, I, B, W are supported", context,
                                 cell, raw.op));
  }
  return raw;
}

}  // namespace

ImportedSchedule parse_pytorch_csv(std::string_view text, std::string_view source) {
  std::vector<std::vector<RawCell>> rows;
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
      const std::string context = fmt::format("{}:{}: column {}", source, line_number, column);
      if (cell.front() == '(') {
        // "(0F7;7B3)OVERLAP_F_B": an overlapped pair, in the order written.
        const auto close = cell.find(')');
        const auto semicolon = cell.find(';');
        if (close == std::string_view::npos || semicolon > close || cell.substr(close + 1) != kOverlapSuffix ||
            cell.find(';', semicolon + 1) < close) {
          throw InputError(fmt::format("{}: bad composite cell '{}': expected (a;b){} like (0F7;7B3){}", context,
                                       excerpt(cell), kOverlapSuffix, kOverlapSuffix));
        }
        RawCell first = parse_cell(trim(cell.substr(1, semicolon - 1)), context);
        first.overlap_next = true;
        row.push_back(first);
        row.push_back(parse_cell(trim(cell.substr(semicolon + 1, close - semicolon - 1)), context));
      } else {
        row.push_back(parse_cell(cell, context));
      }
    }
  }
  if (rows.empty()) throw InputError(fmt::format("{}: no rows (expected one row of cells per rank)", source));

  ImportedSchedule imported;
  imported.devices = static_cast<int>(rows.size());
  int stages = 0;
  std::set<std::pair<int, int>> has_w;  // (stage, microbatch) with a weight-gradient pass
  for (const auto& row : rows) {
    for (const RawCell& cell : row) {
      stages = std::max(stages, cell.stage + 1);
      imported.microbatches = std::max(imported.microbatches, cell.microbatch + 1);
      if (cell.op == 'W') has_w.insert({cell.stage, cell.microbatch});
    }
  }
  const int p = imported.devices;
  if (stages % p != 0) {
    throw InputError(fmt::format("{}: {} stages do not divide evenly over {} ranks", source, stages, p));
  }
  imported.chunks = stages / p;
  // Which placement puts each rank's stages where the file has them.
  std::vector<std::set<int>> stages_of(p);
  for (int r = 0; r < p; ++r) {
    for (const RawCell& cell : rows[r]) stages_of[r].insert(cell.stage);
  }
  auto fits = [&](Placement placement) {
    Problem shape;
    shape.devices = p;
    shape.chunks = imported.chunks;
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
  imported.schedule.name = std::string(source);
  imported.schedule.placement = imported.placement;
  imported.schedule.chunks = imported.chunks;
  imported.schedule.devices.resize(p);
  for (int r = 0; r < p; ++r) {
    for (const RawCell& cell : rows[r]) {
      Pass pass = Pass::F;
      switch (cell.op) {
        case 'F': pass = Pass::F; break;
        case 'I': pass = Pass::B; break;
        case 'W': pass = Pass::W; break;
        // Older files write the input gradient as B (then a W follows); newer ones the full backward.
        case 'B': pass = has_w.contains({cell.stage, cell.microbatch}) ? Pass::B : Pass::BW; break;
        default: break;
      }
      imported.schedule.devices[r].push_back({pass, cell.microbatch, cell.stage / p, cell.overlap_next});
    }
  }
  return imported;
}

std::string to_pytorch_csv(const Problem& problem, const Schedule& schedule) {
  std::string out;
  for (int d = 0; d < schedule.device_count(); ++d) {
    const auto& actions = schedule.devices[d];
    auto cell = [&](const Action& action) {
      const char op = action.pass == Pass::F ? 'F' : action.pass == Pass::B ? 'I' : action.pass == Pass::W ? 'W' : 'B';
      return fmt::format("{}{}{}", problem.stage_of(d, action.chunk), op, action.microbatch);
    };
    for (std::size_t i = 0; i < actions.size(); ++i) {
      if (i > 0) out += ',';
      if (actions[i].overlap_next && i + 1 < actions.size()) {
        out += fmt::format("({};{}){}", cell(actions[i]), cell(actions[i + 1]), kOverlapSuffix);
        ++i;
      } else {
        out += cell(actions[i]);
      }
    }
    out += '\n';
  }
  return out;
}

}  // namespace zb
