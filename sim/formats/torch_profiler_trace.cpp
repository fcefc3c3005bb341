// torch.profiler traces of PyTorch's pipeline runtime into our Trace (see torch_profiler_trace.h).
#include "sim/formats/torch_profiler_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/formats/pytorch_ir.h"
#include "sim/support/json_text.h"
#include "sim/core/limits.h"

namespace zb {

using nlohmann::json;

namespace {

constexpr std::string_view kPrefix = "PP:";

// Times beyond this (in us) are not a profile: Kineto's absolute epoch times are about 1.8e15 us,
// and 4e15 us keeps every time in nanoseconds inside an int64.
constexpr double kMaxTimeUs = 4e15;

const json* events_of(const json& document) {
  if (document.is_array()) return &document;
  if (document.is_object() && document.contains("traceEvents") && document.at("traceEvents").is_array()) {
    return &document.at("traceEvents");
  }
  return nullptr;
}

bool is_annotation(const json& event) {
  if (!event.is_object() || !event.contains("name") || !event.at("name").is_string()) return false;
  return std::string_view(event.at("name").get_ref<const std::string&>()).substr(0, kPrefix.size()) == kPrefix;
}

bool on_gpu(const json& event) {
  return event.contains("cat") && event.at("cat").is_string() && event.at("cat").get<std::string>() == "gpu_user_annotation";
}

// A number of microseconds into integer nanoseconds; integers convert exactly.
std::int64_t to_ns(const json& event, const char* field, std::string_view context) {
  if (!event.contains(field)) throw InputError(fmt::format("{}: missing field '{}'", context, field));
  const json& value = event.at(field);
  if (!value.is_number()) throw InputError(fmt::format("{}: field '{}' is {}: expected a number of microseconds", context, field, excerpt(value.dump())));
  const double us = value.get<double>();
  if (!std::isfinite(us) || std::abs(us) > kMaxTimeUs) {
    throw InputError(fmt::format("{}: field '{}' is {}: not a time in microseconds", context, field, value.dump()));
  }
  if (value.is_number_integer()) return value.get<std::int64_t>() * 1000;
  return std::llround(us * 1000.0);
}

void add_event(const json& event, std::string_view context, ProfiledRank& rank) {
  const std::string& name = event.at("name").get_ref<const std::string&>();
  if (!event.contains("ph") || event.at("ph") != "X") {
    throw InputError(fmt::format("{}: '{}' is not a complete event (\"ph\": \"X\" with ts and dur)", context, excerpt(name)));
  }
  const std::int64_t start = to_ns(event, "ts", context);
  const std::int64_t duration = to_ns(event, "dur", context);
  if (duration < 0) throw InputError(fmt::format("{}: field 'dur' is {}: negative", context, event.at("dur").dump()));
  add_labelled_action(std::string_view(name).substr(kPrefix.size()), start, start + duration, context, rank);
}

int distributed_field(const json& info, const char* name, std::string_view source) {
  if (!info.contains(name)) return -1;
  const json& value = info.at(name);
  if (!value.is_number_integer() || value.get<std::int64_t>() < 0 || value.get<double>() > kMaxActions / 3) {
    throw InputError(fmt::format("{}: distributedInfo field '{}' is {}: expected a rank count from 0 to {:.0f}", source,
                                 name, excerpt(value.dump()), kMaxActions / 3));
  }
  return value.get<int>();
}

std::string join_sources(const ProfiledRank& a, const ProfiledRank& b) { return fmt::format("{} and {}", a.source, b.source); }

}  // namespace

// The label's actions: one, or the two parts of an overlapped block, which share its time
// (a profile times the block, not its parts) in equal halves.
void add_labelled_action(std::string_view label, std::int64_t start, std::int64_t end, std::string_view context,
                         ProfiledRank& rank) {
  // PyTorch's labels are its CSV cells: one reader (pytorch_ir.h).
  const PtAction cell = parse_pt_cell(label, context);
  const std::vector<PtAction> parts = cell.op == PtOp::overlap_f_b ? cell.parts : std::vector<PtAction>{cell};
  const std::int64_t middle = start + (end - start) / 2;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const PtAction& part = parts[i];
    if (!takes_microbatch(part.op)) {  // UNSHARD, RESHARD, REDUCE_GRAD: counted, not drawn
      ++rank.fsdp_actions;
      continue;
    }
    ProfiledAction action;
    action.label = to_cell(part);
    action.stream = part.op == PtOp::send_f || part.op == PtOp::send_b   ? Stream::send
                    : part.op == PtOp::recv_f || part.op == PtOp::recv_b ? Stream::recv
                                                                         : Stream::compute;
    action.op = part.op == PtOp::send_f || part.op == PtOp::recv_f ? 'F'
                : part.op == PtOp::send_b || part.op == PtOp::recv_b ? 'B'
                                                                     : pt_op_name(part.op).front();
    action.stage = part.stage;
    action.microbatch = part.microbatch;
    action.overlap_next = parts.size() > 1 && i == 0;
    action.start_ns = parts.size() > 1 && i == 1 ? middle : start;
    action.end_ns = parts.size() > 1 && i == 0 ? middle : end;
    rank.actions.push_back(std::move(action));
  }
}

void number_rank_by_its_stages(ProfiledRank& rank) {
  int smallest = std::numeric_limits<int>::max();
  for (const ProfiledAction& action : rank.actions) {
    if (action.stream == Stream::compute) smallest = std::min(smallest, action.stage);
  }
  if (smallest == std::numeric_limits<int>::max()) {
    throw InputError(fmt::format("{}: no compute action (F, I, W, B): cannot tell the rank", rank.source));
  }
  rank.rank = smallest;
}

bool is_torch_profiler_trace(const json& document) {
  if (document.is_array()) return document.empty() || document.front().is_object();
  return document.is_object() && document.contains("traceEvents") && document.at("traceEvents").is_array() &&
         (document.contains("schemaVersion") || document.contains("distributedInfo"));
}

ProfiledRank read_profiled_rank(const json& document, std::string_view source) {
  const json* events = events_of(document);
  if (events == nullptr) {
    throw InputError(fmt::format("{}: not a torch.profiler trace (expected an array of events or an object with "
                                 "\"traceEvents\")", source));
  }
  ProfiledRank rank;
  rank.source = std::string(source);
  rank.shared_clock = document.is_object();
  std::int64_t base_ns = 0;
  if (document.is_object()) {
    if (document.contains("distributedInfo")) {
      const json& info = document.at("distributedInfo");
      if (!info.is_object()) throw InputError(fmt::format("{}: field 'distributedInfo' is {}: expected an object", source, excerpt(info.dump())));
      rank.rank = std::max(0, distributed_field(info, "rank", source));
      rank.world_size = std::max(0, distributed_field(info, "world_size", source));
      if (rank.world_size > 0 && rank.rank >= rank.world_size) {
        throw InputError(fmt::format("{}: distributedInfo: rank {} is outside world size {}", source, rank.rank, rank.world_size));
      }
    }
    // Newer Kineto writes times relative to a base shared by every rank (a 3-month boundary).
    if (document.contains("baseTimeNanoseconds")) {
      const json& base = document.at("baseTimeNanoseconds");
      if (!base.is_number_integer() || base.get<double>() < 0 || base.get<double>() > 4e18) {
        throw InputError(fmt::format("{}: field 'baseTimeNanoseconds' is {}: expected nanoseconds since the epoch", source,
                                     excerpt(base.dump())));
      }
      base_ns = base.get<std::int64_t>();
    }
  }
  bool gpu = false;
  for (const json& event : *events) gpu = gpu || (is_annotation(event) && on_gpu(event));
  for (std::size_t i = 0; i < events->size(); ++i) {
    const json& event = (*events)[i];
    if (!is_annotation(event) || on_gpu(event) != gpu) continue;
    add_event(event, fmt::format("{}: event {} ('{}')", source, i, excerpt(event.at("name").get<std::string>())), rank);
  }
  for (ProfiledAction& action : rank.actions) {
    action.start_ns += base_ns;
    action.end_ns += base_ns;
  }
  if (rank.actions.empty()) {
    throw InputError(fmt::format("{}: no \"PP:\" annotations: not a profile of PyTorch's pipeline runtime (every action "
                                 "is a record_function(\"PP:{{stage}}{{op}}{{microbatch}}\"))", source));
  }
  if (!document.is_object() || !document.contains("distributedInfo")) number_rank_by_its_stages(rank);
  return rank;
}

Trace profiled_trace(std::span<const ProfiledRank> ranks) {
  if (ranks.empty()) throw InputError("no torch.profiler trace given");
  int devices = 0;
  const ProfiledRank* sized = nullptr;
  for (const ProfiledRank& rank : ranks) {
    if (rank.shared_clock != ranks.front().shared_clock) {
      throw InputError(fmt::format("{}: one file is Kineto's format, the other the legacy profiler's: not one run",
                                   join_sources(ranks.front(), rank)));
    }
    if (rank.world_size > 0) {
      if (sized != nullptr && sized->world_size != rank.world_size) {
        throw InputError(fmt::format("{}: world sizes {} and {} differ: not one run", join_sources(*sized, rank),
                                     sized->world_size, rank.world_size));
      }
      sized = &rank;
    }
    devices = std::max(devices, rank.rank + 1);
  }
  if (sized != nullptr) devices = std::max(devices, sized->world_size);
  if (devices > kMaxActions / 3) throw InputError(fmt::format("{}: {} ranks: over the limit of {:.0f}", ranks.front().source, devices, kMaxActions / 3));

  std::vector<const ProfiledRank*> by_rank(static_cast<std::size_t>(devices), nullptr);
  std::map<int, const ProfiledRank*> stage_owner;
  for (const ProfiledRank& rank : ranks) {
    auto& slot = by_rank[static_cast<std::size_t>(rank.rank)];
    if (slot != nullptr) throw InputError(fmt::format("{}: both are rank {}", join_sources(*slot, rank), rank.rank));
    slot = &rank;
    for (const ProfiledAction& action : rank.actions) {
      if (action.stream != Stream::compute) continue;
      const auto [owner, added] = stage_owner.emplace(action.stage, &rank);
      if (!added && owner->second != &rank) {
        throw InputError(fmt::format("{}: both run stage {}", join_sources(*owner->second, rank), action.stage));
      }
    }
  }
  // Chunk: the stage's index among its rank's stages (rank r's stages r, r+p, ... or r, 2p-1-r).
  std::map<int, int> chunk_of;
  std::vector<int> stages_on(static_cast<std::size_t>(devices), 0);
  for (const auto& [stage, owner] : stage_owner) chunk_of[stage] = stages_on[static_cast<std::size_t>(owner->rank)]++;

  // PyTorch's B is our B when the stage and microbatch also have a W (older runtimes), else BW.
  std::set<std::pair<int, int>> has_weight;
  std::map<std::pair<int, int>, Pass> backward_of;
  std::set<std::tuple<int, int, char, int, int>> seen;
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (const ProfiledRank& rank : ranks) {
    for (const ProfiledAction& action : rank.actions) {
      origin = std::min(origin, action.start_ns);
      if (!seen.emplace(static_cast<int>(action.stream), action.stage, action.op, action.microbatch, rank.rank).second) {
        throw InputError(fmt::format("{}: PP:{} appears twice: a profile of more than one step? (profile one step, or "
                                     "split the file per step)", rank.source, action.label));
      }
      if (action.stream == Stream::compute && action.op == 'W') has_weight.emplace(action.stage, action.microbatch);
    }
  }
  for (const ProfiledRank& rank : ranks) {
    for (const ProfiledAction& action : rank.actions) {
      if (action.stream != Stream::compute || (action.op != 'I' && action.op != 'B')) continue;
      const bool split = action.op == 'I' || has_weight.count({action.stage, action.microbatch}) > 0;
      backward_of[{action.stage, action.microbatch}] = split ? Pass::B : Pass::BW;
    }
  }
  auto backward = [&](int stage, int microbatch) {
    const auto it = backward_of.find({stage, microbatch});
    return it == backward_of.end() ? Pass::B : it->second;  // that stage's file was not given
  };
  auto chunk = [&](int stage) {
    const auto it = chunk_of.find(stage);
    return it == chunk_of.end() ? 0 : it->second;
  };
  auto ms = [&](std::int64_t ns) { return static_cast<double>(ns - origin) / 1e6; };

  Trace trace;
  trace.meta.engine = "torch.profiler";
  trace.meta.time_unit = TimeUnit::ms;
  trace.devices = devices;
  std::vector<Span> transfers;
  for (const ProfiledRank& rank : ranks) {
    for (const ProfiledAction& action : rank.actions) {
      Span span;
      span.device = rank.rank;
      span.stream = action.stream;
      span.microbatch = action.microbatch;
      span.start = ms(action.start_ns);
      span.end = ms(action.end_ns);
      if (action.stream == Stream::compute) {
        span.stage = action.stage;
        span.pass = action.op == 'F' ? Pass::F : action.op == 'W' ? Pass::W : backward(action.stage, action.microbatch);
        span.chunk = chunk(action.stage);
        span.overlap_next = action.overlap_next;
        trace.spans.push_back(span);
        continue;
      }
      // A transfer names the stage that produced what travels: a received activation comes from
      // the stage before, a received gradient from the stage after.
      const bool received = action.stream == Stream::recv;
      span.stage = action.op == 'F' ? action.stage - (received ? 1 : 0) : action.stage + (received ? 1 : 0);
      if (span.stage < 0) {
        throw InputError(fmt::format("{}: PP:{}: stage 0 receives no activation (it has no stage before it)",
                                     rank.source, action.label));
      }
      span.pass = action.op == 'F' ? Pass::F : backward(span.stage, action.microbatch);
      span.chunk = chunk(span.stage);
      transfers.push_back(span);
    }
  }
  auto by_device_and_time = [](const Span& a, const Span& b) {
    return std::tie(a.device, a.start, a.end, a.stage, a.microbatch) < std::tie(b.device, b.start, b.end, b.stage, b.microbatch);
  };
  std::stable_sort(trace.spans.begin(), trace.spans.end(), by_device_and_time);
  std::stable_sort(transfers.begin(), transfers.end(), by_device_and_time);
  trace.spans.insert(trace.spans.end(), transfers.begin(), transfers.end());
  trace.memory.assign(static_cast<std::size_t>(devices), {});
  // A measured run has no cost model: the busiest device's compute time is the bubble-free work.
  const Metrics busy = compute_metrics(trace, 0);
  trace.metrics = compute_metrics(trace, busy.busy.empty() ? 0.0 : *std::max_element(busy.busy.begin(), busy.busy.end()));
  return trace;
}

Trace read_torch_profiler_files(const std::vector<std::string>& paths) {
  std::vector<ProfiledRank> ranks;
  ranks.reserve(paths.size());
  for (const std::string& path : paths) ranks.push_back(read_profiled_rank(parse_json(read_file(path), path), path));
  return profiled_trace(ranks);
}

}  // namespace zb
