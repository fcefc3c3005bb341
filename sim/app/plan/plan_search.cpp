// The recommend search: enumerate, prune on memory before scheduling, evaluate best bound first,
// stop where the step-time bound (step_bound.h) is slower than the tenth best, confirm the top on SimGrid.
#include "sim/app/plan/plan_search.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>

#include "models/cost_model.h"
#include "models/model_setup.h"
#include "models/presets.h"
#include "models/setup_infeasible.h"
#include "models/stage_split.h"
#include "sim/app/catalog/engines.h"
#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/run_row.h"
#include "sim/app/plan/detail/step_bound.h"
#include "sim/support/error.h"
#include "sim/support/parallel_for.h"
#include "sim/support/time_units.h"
#include "sim/app/catalog/preset_files.h"

namespace zb::plan {

namespace {

// A candidate's scenario with its costs derived (SetupInfeasible when its static memory does not fit).
Scenario candidate_scenario(const PlanQuery& query, const std::string& hardware, const PlanCandidate& candidate) {
  Scenario scenario = scenario_from_json(plan_scenario_json(query, hardware, candidate), "recommend", "");
  derive_model_costs(scenario);
  return scenario;
}

// The layer split kinds of models/stage_split.h a candidate can take. A new kind is one more word
// here (it must be a value the scenario field "split" accepts).
const std::vector<std::string> kSplitKinds = {"even", "paper"};
// Microbatch sizes tried (sequences); the batch per replica must be a multiple.
constexpr int kMicrobatchSizes[] = {1, 2, 4, 8};
// Recomputation. Selective recomputes the attention core, whose s x s tensors flash attention
// (always on in a plan: every framework runs it) never keeps: it would equal "none" (models/README.md).
const std::vector<std::string> kRecompute = {"none", "full"};
// Optimizer sharding with data parallelism: ZeRO-1 moves the same gradient bytes as an all-reduce
// (models/cost_model.cpp), so its time is priced. ZeRO-2/3 and FSDP are left out: with a pipeline
// the gradients (and parameters) of every microbatch would be reduce-scattered (and gathered)
// again, which DeepSpeed's pipeline engine refuses and the cost model does not charge.
const std::vector<std::string> kSharding = {"none", "zero-1"};
// Candidates evaluated between two updates of the pruning bound: fixed, so that the candidates
// pruned (and so every output) do not depend on --jobs.
constexpr std::size_t kBatch = 64;

struct ChunkShape {
  int chunks;
  std::string placement;
};

// The shapes a generator runs at: one chunk, its own placement with two, or two and four
// interleaved.
std::vector<ChunkShape> generator_shapes(const GeneratorInfo& info) {
  if (info.chunks != ChunkSupport::multi) return {{1, "linear"}};
  if (info.placement) return {{2, std::string(placement_name(*info.placement))}};
  return {{2, "interleaved"}, {4, "interleaved"}};
}

// A shape of the cost model: everything but the schedule.
struct Shape {
  PlanCandidate base;  // schedule empty
  std::vector<std::string> schedules;
};

struct Evaluated {
  std::optional<PlanResult> result;  // ok rows
  std::string status;                // ok | over-limit | unsupported | infeasible
  std::string reason;
  double memory_GB = 0;
};

// The hardware preset whose bf16 peak is the cluster's GPU peak, when exactly one is.
std::string hardware_for_cluster(const nlohmann::json& cluster, const std::string& cluster_name) {
  const double tflops = cluster.value("gpu_tflops", 0.0);
  std::vector<std::string> matches;
  for (const std::string& name : models::preset_names("hardware")) {
    const auto preset = models::resolve_preset("hardware", name, {}, "--hardware", catalog::read_preset_file);
    if (preset.object.value("peak_tflops_bf16", -1.0) == tflops) matches.push_back(name);
  }
  if (matches.size() == 1) return matches.front();
  throw InputError(fmt::format("--hardware: cluster '{}' has {} TFLOPS GPUs, which {} hardware presets have ({}); "
                               "name one with --hardware",
                               cluster_name, tflops, matches.size(), fmt::join(matches, ", ")));
}

bool divides(int d, int n) { return d > 0 && n % d == 0; }

int recompute_rank(const std::string& recompute) {
  return static_cast<int>(std::find(kRecompute.begin(), kRecompute.end(), recompute) - kRecompute.begin());
}

// Why `c` is slower than `w`, from where its extra time goes: compute of the busiest device (and
// the knob that changed it), or time beyond compute (bubble, data-parallel reduction).
std::string loses_because(const PlanResult& w, const PlanResult& c) {
  const auto& a = w.candidate;
  const auto& b = c.candidate;
  const double slower = c.step_time_s / w.step_time_s - 1;
  const double d_compute = c.compute_s - w.compute_s;
  const double d_other = (c.step_time_s - c.compute_s) - (w.step_time_s - w.compute_s);
  if (c.step_time_s <= w.step_time_s) {
    if (c.simgrid_step_time_s && w.simgrid_step_time_s && *c.simgrid_step_time_s > *w.simgrid_step_time_s) {
      return fmt::format("slower on SimGrid ({:.3f} s vs {:.3f} s)", *c.simgrid_step_time_s, *w.simgrid_step_time_s);
    }
    if (c.memory_GB > w.memory_GB) return fmt::format("same time, more memory ({:.1f} vs {:.1f} GB)", c.memory_GB, w.memory_GB);
    return "tie: same time and memory";
  }
  std::string why;
  if (d_other >= d_compute) {
    if (c.bubble_rate > w.bubble_rate + 1e-4) {
      why = fmt::format("more bubble ({:.1f}% vs {:.1f}%)", 100 * c.bubble_rate, 100 * w.bubble_rate);
    } else if (b.dp > a.dp) {
      why = fmt::format("dp gradient all-reduce over {} replicas", b.dp);
    } else {
      why = "more time outside compute (optimizer step, transfers)";
    }
  } else if (recompute_rank(b.recompute) > recompute_rank(a.recompute)) {
    why = fmt::format("recompute cost ({} vs {})", b.recompute, a.recompute);
  } else if (b.ep > a.ep) {
    why = fmt::format("ep={} all-to-alls over more GPUs (vs ep={})", b.ep, a.ep);
  } else if (b.ep < a.ep) {
    why = fmt::format("ep={}: more experts per GPU (vs ep={})", b.ep, a.ep);
  } else if (b.tp > a.tp) {
    why = fmt::format("tp={} collectives (vs tp={})", b.tp, a.tp);
  } else if (b.microbatch_size < a.microbatch_size) {
    why = fmt::format("smaller microbatches: less efficient kernels (mbs {} vs {})", b.microbatch_size, a.microbatch_size);
  } else if (b.split != a.split) {
    why = fmt::format("stage imbalance ({} split vs {})", b.split, a.split);
  } else if (b.pp > a.pp) {
    why = fmt::format("busier device: pp={} (vs {})", b.pp, a.pp);
  } else {
    why = "more compute on the busiest device";
  }
  return fmt::format("{} (+{:.1f}%)", why, 100 * slower);
}

bool better(const PlanResult& x, const PlanResult& y, std::size_t ix, std::size_t iy) {
  if (x.step_time_s != y.step_time_s) return x.step_time_s < y.step_time_s;
  if (x.memory_GB != y.memory_GB) return x.memory_GB < y.memory_GB;
  return ix < iy;
}

}  // namespace

std::string PlanCandidate::label() const {
  return fmt::format("pp{} tp{} dp{} v{} mbs{} m{}{} split={} recompute={} sharding={}{}{}", pp, tp, dp, chunks,
                     microbatch_size, microbatches, schedule.empty() ? "" : " " + schedule, split, recompute, sharding,
                     ep > 1 ? fmt::format(" ep{}", ep) : "", offload_chunks > 0 ? fmt::format(" offload={}", offload_chunks) : "");
}

nlohmann::json plan_scenario_json(const PlanQuery& query, const std::string& hardware, const PlanCandidate& c) {
  nlohmann::json scenario;
  scenario["name"] = fmt::format("{}-{}-pp{}-tp{}-dp{}{}-{}", query.model, query.cluster, c.pp, c.tp, c.dp,
                                 c.ep > 1 ? fmt::format("-ep{}", c.ep) : "", c.schedule);
  scenario["description"] = fmt::format("zbsim recommend: global batch {}, {}", query.global_batch, c.label());
  scenario["model"] = query.model;
  scenario["hardware"] = hardware;
  scenario["cluster"] = query.cluster;
  scenario["microbatch_size"] = c.microbatch_size;
  if (query.seq_len) scenario["seq_len"] = *query.seq_len;
  scenario["split"] = c.split;
  scenario["flash_attention"] = true;
  scenario["tensor_parallel"] = c.tp;
  scenario["sequence_parallel"] = c.tp > 1;
  scenario["data_parallel"] = c.dp;
  if (c.ep > 1) scenario["expert_parallel"] = c.ep;
  scenario["sharding"] = c.sharding;
  scenario["recompute"] = c.recompute;
  scenario["problem"] = {{"p", c.pp}, {"m", c.microbatches}, {"chunks", c.chunks}, {"placement", c.placement}};
  scenario["schedules"] = nlohmann::json::array({c.schedule});
  if (c.offload_chunks > 0) scenario["offload_chunks"] = c.offload_chunks;
  if (query.cost_model != models::CostModel::calibrated) scenario["cost_model"] = models::cost_model_name(query.cost_model);
  return scenario;
}

namespace {

// The presets the query names, read once, and the GPUs it plans for.
struct Resolved {
  models::PresetRef model;
  models::PresetRef cluster;
  std::string hardware;  // the preset's name
  models::PresetRef hardware_preset;
  int per_node = 1;
  int gpus = 1;
};

Resolved resolve_query(const PlanQuery& query) {
  if (query.global_batch < 1) {
    throw InputError(fmt::format("--global-batch: {} is not a batch size (expected 1 or more sequences)", query.global_batch));
  }
  if (query.jobs < 1) throw InputError(fmt::format("--jobs: {} (expected 1 or more)", query.jobs));
  Resolved r;
  r.model = models::resolve_preset("transformers", query.model, {}, "--model", catalog::read_preset_file);
  r.cluster = models::resolve_preset("clusters", query.cluster, {}, "--cluster", catalog::read_preset_file);
  r.hardware = query.hardware.empty() ? hardware_for_cluster(r.cluster.object, query.cluster) : query.hardware;
  r.hardware_preset = models::resolve_preset("hardware", r.hardware, {}, "--hardware", catalog::read_preset_file);
  const int nodes = r.cluster.object.value("nodes", 1);
  r.per_node = r.cluster.object.value("gpus_per_node", 1);
  r.gpus = query.gpus.value_or(nodes * r.per_node);
  if (r.gpus < 1 || r.gpus > nodes * r.per_node) {
    throw InputError(fmt::format("--gpus: {} (cluster '{}' has {} GPUs)", r.gpus, query.cluster, nodes * r.per_node));
  }
  return r;
}

// The space, in a fixed order: one Shape per cost-model shape with the schedules that run on it.
// Counts the candidates into `search`.
std::vector<Shape> enumerate_shapes(const PlanQuery& query, const Resolved& resolved, PlanSearch& search) {
  const int layers = resolved.model.object.value("layers", 1);
  const int heads = resolved.model.object.value("heads", 1);
  const int kv_heads = resolved.model.object.value("kv_heads", heads);
  const int ffn = resolved.model.object.value("ffn_hidden", 1);
  const int experts = resolved.model.object.value("moe_experts", 0);
  const int per_node = resolved.per_node;
  const int gpus = resolved.gpus;
  // A split kind that puts the same layers on every stage as the first kind is the same plan.
  const auto same_layers_as_first = [&](const std::string& split, int stages) {
    if (split == kSplitKinds.front()) return false;
    const auto layers_of = [&](const std::string& kind) {
      return models::split_layers(layers, stages, models::split_from_json(nlohmann::json(kind), "recommend"), "recommend");
    };
    try {
      return layers_of(split) == layers_of(kSplitKinds.front());
    } catch (const models::SetupInfeasible&) {
      return false;
    }
  };
  // Adds `name` at `base`'s shape. Shapes of one (pp, tp, mbs, recompute, sharding, split) are
  // adjacent: a few back are searched.
  std::vector<Shape> shapes;
  const auto add = [&](const PlanCandidate& base, const std::string& name) {
    const auto same = [&](const Shape& s) {
      const auto& b = s.base;
      return b.pp == base.pp && b.tp == base.tp && b.microbatch_size == base.microbatch_size &&
             b.recompute == base.recompute && b.sharding == base.sharding && b.split == base.split &&
             b.chunks == base.chunks && b.placement == base.placement && b.ep == base.ep;
    };
    const auto back = shapes.rbegin() + std::min<std::size_t>(shapes.size(), 8);
    auto it = std::find_if(shapes.rbegin(), back, same);
    if (it == back) {
      shapes.push_back({base, {}});
      it = shapes.rbegin();
    }
    it->schedules.push_back(name);
    ++search.candidates;
  };
  bool any_divisible = false;
  for (int tp = 1; tp <= per_node; ++tp) {
    if (!divides(tp, per_node) || !divides(tp, heads) || !divides(tp, kv_heads) || !divides(tp, ffn)) continue;
    for (int pp = 1; pp <= layers; ++pp) {
      if (!divides(pp * tp, gpus)) continue;
      const int dp = gpus / (pp * tp);
      if (query.global_batch % dp != 0) continue;
      any_divisible = true;
      // A MoE model's experts over every power-of-two group of the stage's GPUs that divides them
      // (1: each GPU holds every expert); a dense model has none.
      std::vector<int> eps = {1};
      for (int ep = 2; experts > 0 && ep <= tp * dp; ep *= 2) {
        if (divides(ep, experts) && divides(ep, tp * dp)) eps.push_back(ep);
      }
      for (const int ep : eps)
      for (const int mbs : kMicrobatchSizes) {
        if ((query.global_batch / dp) % mbs != 0) continue;
        for (const std::string& recompute : kRecompute) {
          for (const std::string& sharding : kSharding) {
            // ZeRO-1 dominates none with data parallelism: the same gradient bytes, a shorter
            // update (less optimizer state per GPU) and less memory; without it there is nothing to shard.
            if ((sharding != "none") != (dp > 1)) continue;
            for (const std::string& split : kSplitKinds) {
              if (pp == 1 && split != kSplitKinds.front()) continue;  // one stage: nothing to split
              for (const std::string& name : catalog::generators().names()) {
                const GeneratorInfo& info = catalog::generators().get(name);
                if (info.long_running) continue;  // the ILP: seconds per point; zb-auto is its heuristic
                // Without a pipeline every schedule is gradient accumulation: 1F1B stands for them all.
                if (pp == 1 && name != "1f1b") continue;
                for (const ChunkShape& cs : generator_shapes(info)) {
                  if (pp * cs.chunks > layers) continue;
                  // Each model copy is split over its own path (one copy per device under bidirectional).
                  if (same_layers_as_first(split, cs.placement == "bidirectional" ? pp : pp * cs.chunks)) continue;
                  add(PlanCandidate{pp, tp, dp, ep, cs.chunks, cs.placement, mbs, query.global_batch / (dp * mbs),
                                    "", split, recompute, sharding},
                      name);
                }
              }
            }
          }
        }
      }
    }
  }
  if (!any_divisible) {
    throw InputError(fmt::format("--global-batch: {} is not divisible by any data-parallel degree of {} GPUs "
                                 "(gpus / (pp * tp)) for model '{}'",
                                 query.global_batch, gpus, query.model));
  }
  return shapes;
}

// A shape's costs, its step-time bound, and why it cannot fit before any schedule runs.
struct Derived {
  std::optional<Scenario> scenario;
  double compute_s = 0;  // the busiest device's compute
  double bound_s = 0;    // no schedule of the shape is faster (step_bound.h)
  bool activation_misfit = false;
  std::string miss;
  double over_GB = std::numeric_limits<double>::infinity();
};

std::vector<Derived> derive_shapes(const PlanQuery& query, const std::string& hardware, const std::vector<Shape>& shapes) {
  std::vector<Derived> derived(shapes.size());
  parallel_for(shapes.size(), query.jobs, [&](std::size_t i) {
    Derived& d = derived[i];
    try {
      Scenario scenario = candidate_scenario(query, hardware, shapes[i].base);
      const Problem problem = scenario.spec.build(scenario.source);
      const StepBound bound = step_time_bound(problem);
      d.compute_s = bound.compute * seconds_per(problem.time_unit);
      d.bound_s = bound.bound * seconds_per(problem.time_unit);
      double largest_f = 0;
      for (const double f : problem.mem_f) largest_f = std::max(largest_f, f);
      if (problem.mem_limit && !problem.mem_limit->times_p && largest_f > problem.mem_limit->value) {
        d.activation_misfit = true;
        d.over_GB = largest_f - problem.mem_limit->value;
        d.miss = fmt::format("one microbatch's activations ({:.1f} GB) exceed what static memory leaves ({:.1f} GB)",
                             largest_f, problem.mem_limit->value);
      }
      d.scenario = std::move(scenario);
    } catch (const models::SetupInfeasible& e) {
      d.miss = e.what();
    }
  });
  return derived;
}

struct Task {
  std::size_t shape;
  std::string schedule;
  std::size_t order;  // enumeration order: the last tie-break
  int offload_chunks = 0;
};

// How many chunks per device a plan may offload: none, and where the hardware has a host link,
// half of them and all (PipeOffload's PO-H and PO-F choices, as a pass on any schedule). po-h and
// po-f choose their own.
std::vector<int> offload_choices(const Scenario& scenario, const std::string& schedule, int chunks) {
  if (scenario.spec.t_offload.empty() || schedule == "po-h" || schedule == "po-f") return {0};
  std::vector<int> choices = {0, (chunks + 1) / 2, chunks};
  choices.erase(std::unique(choices.begin(), choices.end()), choices.end());
  return choices;
}

// Every schedule of every shape that can fit, best bound first so that the bound prunes as early as
// it can; the others count as pruned on memory.
std::vector<Task> order_tasks(const PlanQuery& query, const std::vector<Shape>& shapes,
                              const std::vector<Derived>& derived, PlanSearch& search) {
  std::vector<Task> tasks;
  std::size_t order = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    for (const std::string& name : shapes[i].schedules) {
      const std::size_t k = order++;
      if (!derived[i].scenario || (query.prune && derived[i].activation_misfit)) {
        ++search.pruned_memory;
        continue;
      }
      const std::vector<int> offloads = offload_choices(*derived[i].scenario, name, shapes[i].base.chunks);
      search.candidates += static_cast<long>(offloads.size()) - 1;  // each offload choice is a candidate too
      for (const int offload : offloads) tasks.push_back({i, name, k, offload});
    }
  }
  std::stable_sort(tasks.begin(), tasks.end(),
                   [&](const Task& x, const Task& y) { return derived[x.shape].bound_s < derived[y.shape].bound_s; });
  return tasks;
}

// One candidate through the evaluator: its row, and its plan figures when the row is ok.
Evaluated evaluate_task(const Task& task, const Shape& shape, const Derived& derived) {
  Evaluated e;
  Scenario scenario = *derived.scenario;
  scenario.offload_chunks = task.offload_chunks;
  const catalog::ResultRow row = catalog::run_generator_row(task.schedule, scenario, catalog::EngineOptions{}, nullptr);
  e.status = row.status;
  e.reason = row.reason;
  e.memory_GB = catalog::row_extra(row, "memory_GB").value_or(0);
  if (row.status != "ok" || !row.has_metrics) return e;
  PlanResult r;
  r.candidate = shape.base;
  r.candidate.schedule = task.schedule;
  r.candidate.offload_chunks = task.offload_chunks;
  const double unit = seconds_per(scenario.spec.time_unit);
  r.step_time_s = catalog::row_extra(row, "step_time").value_or(0) * unit;
  r.samples_per_s_per_gpu = catalog::row_extra(row, "samples_per_s_per_gpu").value_or(0);
  r.tokens_per_s = catalog::row_extra(row, "tokens_per_s").value_or(0);
  r.mfu = catalog::row_extra(row, "mfu").value_or(0);
  r.memory_GB = e.memory_GB;
  r.bubble_rate = row.metrics.bubble_rate;
  r.compute_s = derived.compute_s;
  r.bound_s = derived.bound_s;
  e.result = r;
  return e;
}

// What the evaluation found: the ok plans with their enumeration order, and the run over the
// memory limit that missed by least.
struct Evaluation {
  std::vector<std::pair<PlanResult, std::size_t>> ok;
  std::optional<std::pair<double, ClosestMiss>> closest_run;
};

// The step time a candidate must beat to enter the top: the top-th best so far (infinite before
// there are that many, or without pruning).
double entry_threshold(const PlanQuery& query, const Evaluation& found) {
  if (!query.prune || found.ok.size() < static_cast<std::size_t>(query.top)) return std::numeric_limits<double>::infinity();
  std::vector<double> times;
  for (const auto& [r, k] : found.ok) times.push_back(r.step_time_s);
  std::nth_element(times.begin(), times.begin() + (query.top - 1), times.end());
  return times[query.top - 1];
}

// The tasks in batches of kBatch, each batch in parallel, stopping where the bound is slower than
// the top-th best so far.
Evaluation evaluate_tasks(const PlanQuery& query, const std::vector<Shape>& shapes, const std::vector<Derived>& derived,
                          const std::vector<Task>& tasks, PlanSearch& search,
                          const std::function<void(long, long)>& progress) {
  Evaluation found;
  std::size_t next = 0;
  while (next < tasks.size()) {
    // A bound's sums round differently from the engine's: a candidate exactly at the threshold
    // (which could tie the tenth and win on memory) is never pruned by a last-bit difference.
    const double threshold = entry_threshold(query, found) * (1 + 1e-9);
    const std::size_t end = std::min(tasks.size(), next + kBatch);
    if (derived[tasks[next].shape].bound_s > threshold) {
      search.pruned_bound += static_cast<long>(tasks.size() - next);
      if (progress) progress(static_cast<long>(tasks.size()), static_cast<long>(tasks.size()));
      break;
    }
    std::vector<Evaluated> batch(end - next);
    parallel_for(end - next, query.jobs, [&](std::size_t j) {
      const Task& task = tasks[next + j];
      if (derived[task.shape].bound_s > threshold) {
        batch[j].status = "pruned";
        return;
      }
      batch[j] = evaluate_task(task, shapes[task.shape], derived[task.shape]);
    });
    for (std::size_t j = 0; j < batch.size(); ++j) {
      const Task& task = tasks[next + j];
      Evaluated& e = batch[j];
      if (e.status == "pruned") {
        ++search.pruned_bound;
        continue;
      }
      ++search.evaluated;
      if (e.result) {
        found.ok.emplace_back(*e.result, task.order);
      } else if (e.status == "over-limit") {
        ++search.over_limit;
        const double over = e.memory_GB - search.device_GB;
        if (!found.closest_run || over < found.closest_run->first) {
          PlanCandidate c = shapes[task.shape].base;
          c.schedule = task.schedule;
          found.closest_run = {over, ClosestMiss{c.label(), e.reason, over}};
        }
      } else {
        ++search.unsupported;
      }
    }
    if (progress) progress(static_cast<long>(end), static_cast<long>(tasks.size()));
    next = end;
  }
  return found;
}

// Nothing fits: the closest miss (a run over the limit, else the shape that missed by least:
// activations over before static memory over) into `search`, and the error that says so.
[[noreturn]] void throw_nothing_fits(const PlanQuery& query, const Resolved& resolved, const std::vector<Shape>& shapes,
                                     const std::vector<Derived>& derived, const Evaluation& found, PlanSearch& search) {
  ClosestMiss miss;
  if (found.closest_run) {
    miss = found.closest_run->second;
  } else {
    std::size_t best = shapes.size();
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      if (derived[i].miss.empty()) continue;
      if (best == shapes.size() || derived[i].over_GB < derived[best].over_GB) best = i;
    }
    if (best < shapes.size()) miss = ClosestMiss{shapes[best].base.label(), derived[best].miss, derived[best].over_GB};
  }
  search.closest = miss;
  throw InputError(fmt::format("nothing fits: model '{}' on {} GPUs of cluster '{}' ({}, {} GB), global batch {}; "
                               "closest: {}: {}",
                               query.model, resolved.gpus, query.cluster, resolved.hardware, search.device_GB,
                               query.global_batch, miss.candidate.empty() ? "none" : miss.candidate,
                               miss.reason.empty() ? "no schedule could be built" : miss.reason));
}

// The top again on SimGrid, which reorders them when it is built (links shared, messages in order).
void confirm_on_simgrid(const PlanQuery& query, const std::string& hardware, std::vector<PlanResult>& top) {
  for (PlanResult& r : top) {
    Scenario scenario = candidate_scenario(query, hardware, r.candidate);
    catalog::EngineOptions simgrid;
    simgrid.engine = "simgrid";
    simgrid.cluster = scenario_cluster_file(scenario);
    try {
      const catalog::ResultRow row = catalog::run_generator_row(r.candidate.schedule, scenario, simgrid, nullptr);
      if (row.has_metrics) r.simgrid_step_time_s = catalog::row_extra(row, "step_time").value_or(0) * seconds_per(scenario.spec.time_unit);
    } catch (const InputError&) {
      // A shape SimGrid cannot run (more devices than its limit): the evaluator's figure stands.
    }
  }
  std::stable_sort(top.begin(), top.end(), [](const PlanResult& x, const PlanResult& y) {
    return x.simgrid_step_time_s.value_or(x.step_time_s) < y.simgrid_step_time_s.value_or(y.step_time_s);
  });
}

// The Pareto front of memory against step time.
std::vector<PlanResult> pareto_front(std::vector<std::pair<PlanResult, std::size_t>> by_memory) {
  std::sort(by_memory.begin(), by_memory.end(), [](const auto& x, const auto& y) {
    if (x.first.memory_GB != y.first.memory_GB) return x.first.memory_GB < y.first.memory_GB;
    return better(x.first, y.first, x.second, y.second);
  });
  std::vector<PlanResult> front;
  double fastest = std::numeric_limits<double>::infinity();
  for (const auto& [r, k] : by_memory) {
    if (r.step_time_s < fastest) {
      front.push_back(r);
      fastest = r.step_time_s;
    }
  }
  return front;
}

}  // namespace

PlanSearch search_plans(const PlanQuery& query, const std::function<void(long, long)>& progress) {
  const Resolved resolved = resolve_query(query);
  PlanSearch search;
  search.model_label = resolved.model.object.value("name", query.model);
  search.hardware_label = resolved.hardware;
  search.cluster_label = query.cluster;
  search.gpus = resolved.gpus;
  search.seq_len = query.seq_len.value_or(resolved.model.object.value("seq_len", 0));
  search.layers = resolved.model.object.value("layers", 1);
  search.global_batch = query.global_batch;
  search.device_GB = resolved.hardware_preset.object.value("memory_GB", 0.0);

  const std::vector<Shape> shapes = enumerate_shapes(query, resolved, search);
  const std::vector<Derived> derived = derive_shapes(query, resolved.hardware, shapes);
  const std::vector<Task> tasks = order_tasks(query, shapes, derived, search);
  Evaluation found = evaluate_tasks(query, shapes, derived, tasks, search, progress);
  if (found.ok.empty()) throw_nothing_fits(query, resolved, shapes, derived, found, search);

  auto& ok = found.ok;
  std::sort(ok.begin(), ok.end(), [](const auto& x, const auto& y) { return better(x.first, y.first, x.second, y.second); });
  for (std::size_t k = 0; k < ok.size() && k < static_cast<std::size_t>(query.top); ++k) search.top.push_back(ok[k].first);
  if (query.confirm_simgrid && catalog::simgrid_available()) confirm_on_simgrid(query, resolved.hardware, search.top);
  for (std::size_t k = 1; k < search.top.size(); ++k) search.top[k].loses_because = loses_because(search.top[0], search.top[k]);
  search.pareto = pareto_front(ok);
  search.winner_scenario = plan_scenario_json(query, resolved.hardware, search.top.front().candidate).dump(2) + "\n";
  return search;
}

}  // namespace zb::plan
