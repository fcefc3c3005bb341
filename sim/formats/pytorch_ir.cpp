// PyTorch's pipeline IR: names, cells, the runtime's lowering and the check of transfer points.
#include "sim/formats/pytorch_ir.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_set>

#include "sim/support/error.h"
#include "sim/support/text_trim.h"
#include "sim/core/limits.h"

namespace zb {

std::string_view pt_op_name(PtOp op) {
  switch (op) {
    case PtOp::F: return "F";
    case PtOp::I: return "I";
    case PtOp::B: return "B";
    case PtOp::W: return "W";
    case PtOp::overlap_f_b: return "OVERLAP_F_B";
    case PtOp::send_f: return "SEND_F";
    case PtOp::recv_f: return "RECV_F";
    case PtOp::send_b: return "SEND_B";
    case PtOp::recv_b: return "RECV_B";
    case PtOp::unshard: return "UNSHARD";
    case PtOp::reshard: return "RESHARD";
    case PtOp::reduce_grad: return "REDUCE_GRAD";
  }
  return "?";
}

bool is_compute(PtOp op) { return op == PtOp::F || op == PtOp::I || op == PtOp::B || op == PtOp::W; }
bool is_transfer(PtOp op) {
  return op == PtOp::send_f || op == PtOp::recv_f || op == PtOp::send_b || op == PtOp::recv_b;
}
bool takes_microbatch(PtOp op) { return is_compute(op) || is_transfer(op); }

std::string to_cell(const PtAction& action) {
  if (action.op == PtOp::overlap_f_b) {
    std::string cell = "(";
    for (std::size_t i = 0; i < action.parts.size(); ++i) {
      if (i > 0) cell += ';';
      cell += to_cell(action.parts[i]);
    }
    return cell + ")" + std::string(pt_op_name(action.op));
  }
  std::string cell = fmt::format("{}{}", action.stage, pt_op_name(action.op));
  if (action.microbatch >= 0) cell += std::to_string(action.microbatch);
  return cell;
}

namespace {

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

}  // namespace

PtAction parse_pt_cell(std::string_view cell, std::string_view context) {
  if (cell.empty()) bad_cell(cell, context);
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
    pair.parts.push_back(parse_simple_cell(trim_blanks(part), context));
    if (!is_compute(pair.parts.back().op)) {
      throw InputError(fmt::format("{}: composite cell '{}': only compute actions overlap", context, excerpt(cell)));
    }
  }
  return pair;
}


namespace {

// The compute actions of a cell: its parts for a composite, itself otherwise.
std::vector<const PtAction*> compute_of(const PtAction& action) {
  std::vector<const PtAction*> out;
  if (action.op == PtOp::overlap_f_b) {
    for (const PtAction& part : action.parts) out.push_back(&part);
  } else if (is_compute(action.op)) {
    out.push_back(&action);
  }
  return out;
}

bool is_backward_input(PtOp op) { return op == PtOp::I || op == PtOp::B; }

// A tensor that crosses a stage boundary: the forward output of `stage` (to stage + 1) or the
// input gradient of `stage` (to stage - 1), for one microbatch.
struct Message {
  bool forward = true;
  int stage = 0;  // the producing stage
  int microbatch = 0;
  friend auto operator<=>(const Message&, const Message&) = default;
};

std::string describe(const Message& message) {
  return message.forward ? fmt::format("the forward output of stage {} mb {}", message.stage, message.microbatch)
                         : fmt::format("the input gradient of stage {} mb {}", message.stage, message.microbatch);
}

// The message a transfer point sends or receives. RECV cells name the receiving stage.
Message message_of(const PtAction& point) {
  switch (point.op) {
    case PtOp::send_f: return {true, point.stage, point.microbatch};
    case PtOp::recv_f: return {true, point.stage - 1, point.microbatch};
    case PtOp::send_b: return {false, point.stage, point.microbatch};
    default: return {false, point.stage + 1, point.microbatch};  // recv_b
  }
}

// The message a compute action produces for another rank, if any.
std::optional<Message> produced(const PtAction& compute, int stages, const RankOfStage& rank_of_stage) {
  if (compute.op == PtOp::F && compute.stage + 1 < stages &&
      rank_of_stage(compute.stage + 1) != rank_of_stage(compute.stage)) {
    return Message{true, compute.stage, compute.microbatch};
  }
  if (is_backward_input(compute.op) && compute.stage > 0 &&
      rank_of_stage(compute.stage - 1) != rank_of_stage(compute.stage)) {
    return Message{false, compute.stage, compute.microbatch};
  }
  return std::nullopt;
}

// The message a compute action needs from another rank, if any.
std::optional<Message> needed(const PtAction& compute, int stages, const RankOfStage& rank_of_stage) {
  if (compute.op == PtOp::F && compute.stage > 0 && rank_of_stage(compute.stage - 1) != rank_of_stage(compute.stage)) {
    return Message{true, compute.stage - 1, compute.microbatch};
  }
  if (is_backward_input(compute.op) && compute.stage + 1 < stages &&
      rank_of_stage(compute.stage + 1) != rank_of_stage(compute.stage)) {
    return Message{false, compute.stage + 1, compute.microbatch};
  }
  return std::nullopt;
}

// UNSHARD/RESHARD: before each compute action a rank holds the next three distinct stages it
// will compute (all stages of a composite that reaches three), fetching in order of first use
// and releasing the rest in ascending stage order (the order Python iterates a small set of
// small ints, which is how PyTorch's pass releases them); all are released at the end.
std::vector<PtAction> add_unshard_reshard(const std::vector<PtAction>& row) {
  constexpr std::size_t kActiveStages = 3;  // PyTorch's max_active_stages default
  // next_use[i]: the stages from position i on, in order of first use, cut as described.
  std::vector<std::vector<int>> next_use(row.size());
  std::map<int, std::pair<std::size_t, std::size_t>> first_use;  // stage -> (position, part)
  for (std::size_t i = row.size(); i-- > 0;) {
    const auto computes = compute_of(row[i]);
    for (std::size_t part = computes.size(); part-- > 0;) first_use[computes[part]->stage] = {i, part};
    std::vector<std::tuple<std::size_t, std::size_t, int>> order;
    for (const auto& [stage, at] : first_use) order.emplace_back(at.first, at.second, stage);
    std::sort(order.begin(), order.end());
    for (std::size_t k = 0; k < order.size(); ++k) {
      if (k >= kActiveStages && std::get<0>(order[k]) != std::get<0>(order[kActiveStages - 1])) break;
      next_use[i].push_back(std::get<2>(order[k]));
    }
  }
  std::vector<PtAction> out;
  std::set<int> active;
  for (std::size_t i = 0; i < row.size(); ++i) {
    const auto& wanted = next_use[i];
    std::vector<int> evict;
    for (int stage : active) {
      if (std::find(wanted.begin(), wanted.end(), stage) == wanted.end()) evict.push_back(stage);
    }
    std::vector<int> fetch;
    for (int stage : wanted) {
      if (!active.contains(stage)) fetch.push_back(stage);
    }
    for (int stage : evict) {
      out.push_back(pt_action(stage, PtOp::reshard));
      active.erase(stage);
    }
    for (int stage : fetch) {
      out.push_back(pt_action(stage, PtOp::unshard));
      active.insert(stage);
    }
    out.push_back(row[i]);
  }
  for (int stage : active) out.push_back(pt_action(stage, PtOp::reshard));
  return out;
}

// REDUCE_GRAD right after the action that completes a stage's gradients: its m-th B or W.
std::vector<PtAction> add_reduce_grad(const std::vector<PtAction>& row, int microbatches) {
  std::vector<PtAction> out;
  std::map<int, int> backward_count;
  for (const PtAction& action : row) {
    out.push_back(action);
    for (const PtAction* compute : compute_of(action)) {
      if ((compute->op == PtOp::B || compute->op == PtOp::W) && ++backward_count[compute->stage] == microbatches) {
        out.push_back(pt_action(compute->stage, PtOp::reduce_grad));
      }
    }
  }
  return out;
}

// Keys of finished actions for the send/recv pass: an action's stage fixes its rank.
std::int64_t done_key(PtOp op, int stage, int microbatch) {
  return (static_cast<std::int64_t>(op) << 52) ^ (static_cast<std::int64_t>(stage) << 26) ^ (microbatch + 1);
}

}  // namespace

PtRows lower_to_compute_comms(const PtRows& compute_rows, int stages, int microbatches,
                              const RankOfStage& rank_of_stage) {
  const int ranks = static_cast<int>(compute_rows.size());
  std::vector<std::vector<PtAction>> pending(ranks);
  for (int r = 0; r < ranks; ++r) {
    pending[r] = add_reduce_grad(add_unshard_reshard(compute_rows[r]), microbatches);
  }
  PtRows out(ranks);
  std::unordered_set<std::int64_t> done;
  auto is_done = [&](PtOp op, int stage, int mb) { return done.contains(done_key(op, stage, mb)); };
  auto mark = [&](const PtAction& a) { done.insert(done_key(a.op, a.stage, a.microbatch)); };
  // A compute may start once its input is here: received from another rank, or produced on this
  // one by the neighbouring stage (two adjacent stages on one rank pass tensors locally).
  auto ready = [&](const PtAction& compute) {
    const int s = compute.stage;
    const int mb = compute.microbatch;
    if (compute.op == PtOp::F && s > 0) return is_done(PtOp::recv_f, s, mb) || is_done(PtOp::F, s - 1, mb);
    if (is_backward_input(compute.op) && s + 1 < stages) {
      return is_done(PtOp::recv_b, s, mb) || is_done(PtOp::I, s + 1, mb) || is_done(PtOp::B, s + 1, mb);
    }
    return true;
  };
  std::vector<std::size_t> next(ranks, 0);
  int remaining = ranks;
  for (int r = 0; r < ranks; ++r) {
    if (pending[r].empty()) --remaining;
  }
  while (remaining > 0) {
    bool progress = false;
    for (int r = 0; r < ranks; ++r) {
      if (next[r] == pending[r].size()) continue;
      const PtAction& action = pending[r][next[r]];
      const auto computes = compute_of(action);
      if (!std::all_of(computes.begin(), computes.end(), [&](const PtAction* c) { return ready(*c); })) continue;
      out[r].push_back(action);
      if (computes.empty()) mark(action);
      for (const PtAction* compute : computes) {
        mark(*compute);
        if (const auto message = produced(*compute, stages, rank_of_stage)) {
          const int to_stage = message->forward ? message->stage + 1 : message->stage - 1;
          const PtAction send = pt_action(compute->stage, message->forward ? PtOp::send_f : PtOp::send_b, compute->microbatch);
          const PtAction recv = pt_action(to_stage, message->forward ? PtOp::recv_f : PtOp::recv_b, compute->microbatch);
          out[r].push_back(send);
          mark(send);
          out[rank_of_stage(to_stage)].push_back(recv);
          mark(recv);
        }
      }
      if (++next[r] == pending[r].size()) --remaining;
      progress = true;
    }
    if (!progress) {
      std::string waiting;
      for (int r = 0; r < ranks; ++r) {
        if (next[r] < pending[r].size()) waiting += fmt::format(" rank {} at {};", r, to_cell(pending[r][next[r]]));
      }
      throw InputError(fmt::format("cannot add PyTorch's transfers: no rank can go on ({})", waiting));
    }
  }
  return out;
}

PtCommCounts check_transfer_points(const PtRows& rows, int stages, int microbatches,
                                   const RankOfStage& rank_of_stage, std::string_view source) {
  PtCommCounts counts;
  const int ranks = static_cast<int>(rows.size());
  auto fail = [&](int rank, const PtAction& cell, const std::string& why) {
    throw InputError(fmt::format("{}: rank {}: '{}': {}", source, rank, to_cell(cell), why));
  };
  // Where each compute and each transfer point is, and who sends to whom in which order.
  std::map<std::tuple<PtOp, int, int>, std::size_t> compute_at;  // (op, stage, mb) -> position
  std::map<std::pair<bool, Message>, std::pair<int, std::size_t>> point_at;  // (is_send, message) -> (rank, pos)
  std::map<std::pair<int, int>, std::vector<Message>> sent, received;        // (from, to) -> messages in order
  for (int r = 0; r < ranks; ++r) {
    for (std::size_t i = 0; i < rows[r].size(); ++i) {
      for (const PtAction* compute : compute_of(rows[r][i])) compute_at[{compute->op, compute->stage, compute->microbatch}] = i;
    }
  }
  for (int r = 0; r < ranks; ++r) {
    for (std::size_t i = 0; i < rows[r].size(); ++i) {
      const PtAction& cell = rows[r][i];
      if (cell.op == PtOp::unshard) ++counts.unshards;
      if (cell.op == PtOp::reshard) ++counts.reshards;
      if (cell.op == PtOp::reduce_grad) ++counts.reduce_grads;
      if (cell.op == PtOp::overlap_f_b || is_compute(cell.op)) continue;
      if (cell.stage >= stages) fail(r, cell, fmt::format("stage {} does not exist ({} stages)", cell.stage, stages));
      if (rank_of_stage(cell.stage) != r) {
        fail(r, cell, fmt::format("stage {} runs on rank {}", cell.stage, rank_of_stage(cell.stage)));
      }
      if (!is_transfer(cell.op)) continue;
      ++counts.transfer_points;
      if (cell.microbatch >= microbatches) {
        fail(r, cell, fmt::format("microbatch {} does not exist ({} microbatches)", cell.microbatch, microbatches));
      }
      const bool is_send = cell.op == PtOp::send_f || cell.op == PtOp::send_b;
      const Message message = message_of(cell);
      const int peer_stage = is_send ? (message.forward ? message.stage + 1 : message.stage - 1) : message.stage;
      if (peer_stage < 0 || peer_stage >= stages) fail(r, cell, "there is no stage on the other side");
      const int peer = rank_of_stage(peer_stage);
      if (peer == r) fail(r, cell, fmt::format("stage {} is on the same rank: PyTorch passes that tensor locally", peer_stage));
      if (!point_at.emplace(std::pair{is_send, message}, std::pair{r, i}).second) fail(r, cell, "appears twice");
      // The compute it belongs to, on this rank: the producer before a SEND, the consumer after a RECV.
      const int compute_stage = is_send ? message.stage : (message.forward ? message.stage + 1 : message.stage - 1);
      const auto find = [&](PtOp op) {
        const auto it = compute_at.find({op, compute_stage, message.microbatch});
        return it == compute_at.end() ? std::optional<std::size_t>{} : std::optional<std::size_t>{it->second};
      };
      const auto at = message.forward ? find(PtOp::F) : (find(PtOp::I) ? find(PtOp::I) : find(PtOp::B));
      const std::string compute_name = fmt::format("{}{}{}", compute_stage, message.forward ? "F" : "I/B", message.microbatch);
      if (!at) fail(r, cell, fmt::format("its compute {} is not in the file", compute_name));
      if (is_send && *at > i) fail(r, cell, fmt::format("comes before {}, which produces the tensor", compute_name));
      if (!is_send && *at < i) fail(r, cell, fmt::format("comes after {}, which needs the tensor", compute_name));
      (is_send ? sent[{r, peer}] : received[{peer, r}]).push_back(message);
    }
  }
  if (counts.transfer_points == 0) return counts;
  // Every tensor that crosses ranks is sent and received.
  for (int r = 0; r < ranks; ++r) {
    for (const PtAction& cell : rows[r]) {
      for (const PtAction* compute : compute_of(cell)) {
        const auto message = produced(*compute, stages, rank_of_stage);
        if (!message) continue;
        for (const bool is_send : {true, false}) {
          if (!point_at.contains({is_send, *message})) {
            throw InputError(fmt::format("{}: {} crosses ranks but has no {} (a file with transfer points needs all of them)",
                                         source, describe(*message), is_send ? "SEND" : "RECV"));
          }
        }
      }
    }
  }
  // NCCL matches point-to-point messages between two ranks in the order they are posted.
  for (const auto& [pair, messages] : sent) {
    const auto& posted = received[pair];
    const auto mismatch = std::mismatch(messages.begin(), messages.end(), posted.begin(), posted.end());
    if (mismatch.first != messages.end() || mismatch.second != posted.end()) {
      const auto index = static_cast<std::size_t>(mismatch.first - messages.begin());
      throw InputError(fmt::format(
          "{}: rank {} sends to rank {} in another order than rank {} receives: message {} is {} but the receive "
          "posted there is for {} (NCCL would match them)",
          source, pair.first, pair.second, pair.second, index + 1,
          mismatch.first != messages.end() ? describe(*mismatch.first) : "missing",
          mismatch.second != posted.end() ? describe(*mismatch.second) : "missing"));
    }
  }
  // The ranks can run their rows to the end: posts never block, a compute waits for the SEND of
  // the tensor it needs.
  std::set<Message> posted_sends;
  std::vector<std::size_t> next(ranks, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < ranks; ++r) {
      for (; next[r] < rows[r].size(); ++next[r]) {
        const PtAction& cell = rows[r][next[r]];
        const auto computes = compute_of(cell);
        const bool waits = std::any_of(computes.begin(), computes.end(), [&](const PtAction* compute) {
          const auto message = needed(*compute, stages, rank_of_stage);
          return message && !posted_sends.contains(*message);
        });
        if (waits) break;
        if (cell.op == PtOp::send_f || cell.op == PtOp::send_b) posted_sends.insert(message_of(cell));
        progress = true;
      }
    }
  }
  std::string waiting;
  for (int r = 0; r < ranks; ++r) {
    if (next[r] < rows[r].size()) waiting += fmt::format(" rank {} waits at '{}';", r, to_cell(rows[r][next[r]]));
  }
  if (!waiting.empty()) {
    throw InputError(fmt::format("{}: the transfer points deadlock:{} (each compute waits for a SEND that its peer "
                                 "posts only after it)",
                                 source, waiting.substr(0, waiting.size() - 1)));
  }
  return counts;
}

}  // namespace zb
