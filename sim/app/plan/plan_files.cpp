// The winning plan as files, and the Pareto chart of the plans searched.
#include "sim/app/plan/plan_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "models/partition_export.h"
#include "models/stage_split.h"
#include "sim/app/catalog/run_row.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/formats/pytorch_csv.h"
#include "sim/formats/svg_text.h"
#include "sim/formats/torchtitan_settings.h"

namespace zb::plan {

namespace {

// Layers per stage (p * v stages, model order) of the plan's split.
std::vector<int> plan_layers(const PlanCandidate& plan, int layers) {
  models::Split split;
  split.kind = plan.split == "paper" ? models::Split::Kind::paper : models::Split::Kind::even;
  return models::split_layers(layers, plan.pp * plan.chunks, split, "recommend");
}

}  // namespace

std::string megatron_settings(const PlanCandidate& plan, int global_batch, int seq_len, int layers) {
  std::string out = fmt::format("# Megatron-LM flags for {}\n", plan.label());
  out += "# data-parallel size is implied: world size / (tensor * pipeline) = " + std::to_string(plan.dp) + "\n";
  const bool native = plan.schedule == "1f1b" || plan.schedule == "1f1b-i";
  if (!native) {
    out += fmt::format("# Megatron-LM runs 1F1B and interleaved 1F1B only; {} runs from schedule.csv in torchtitan "
                       "(torchtitan.txt). These flags set up the same parallel layout.\n",
                       plan.schedule);
  }
  out += fmt::format("--tensor-model-parallel-size {}\n", plan.tp);
  out += fmt::format("--pipeline-model-parallel-size {}\n", plan.pp);
  if (plan.tp > 1) out += "--sequence-parallel\n";
  if (plan.ep > 1) out += fmt::format("--expert-model-parallel-size {}\n--expert-tensor-parallel-size 1\n", plan.ep);
  out += fmt::format("--micro-batch-size {}\n", plan.microbatch_size);
  out += fmt::format("--global-batch-size {}\n", global_batch);
  out += fmt::format("--seq-length {}\n", seq_len);
  out += "--use-flash-attn\n";
  if (plan.sharding == "zero-1") out += "--use-distributed-optimizer\n";
  if (plan.recompute == "selective") out += "--recompute-granularity selective\n";
  if (plan.recompute == "full") out += "--recompute-granularity full\n--recompute-method uniform\n--recompute-num-layers 1\n";
  const std::vector<int> per_stage = plan_layers(plan, layers);
  const auto layout = [&] {
    return fmt::format("--pipeline-model-parallel-layout {}\n",
                       models::megatron_layout(per_stage));
  };
  if (plan.chunks > 1 && plan.placement == "interleaved") {
    if (std::all_of(per_stage.begin(), per_stage.end(), [&](int n) { return n == per_stage.front(); })) {
      out += fmt::format("--num-layers-per-virtual-pipeline-stage {}\n", per_stage.front());
    } else {
      out += "# uneven virtual stages: Megatron-LM's --pipeline-model-parallel-layout states them\n" + layout();
    }
  } else if (plan.chunks == 1 && per_stage.size() > 2) {
    const bool middle_equal = std::all_of(per_stage.begin() + 1, per_stage.end() - 1,
                                          [&](int n) { return n == per_stage[1]; });
    if (middle_equal && (per_stage.front() != per_stage[1] || per_stage.back() != per_stage[1])) {
      out += fmt::format("--decoder-first-pipeline-num-layers {}\n", per_stage.front());
      out += fmt::format("--decoder-last-pipeline-num-layers {}\n", per_stage.back());
    } else if (!middle_equal) {
      out += "# uneven middle stages: Megatron-LM's --pipeline-model-parallel-layout states them\n" + layout();
    }
  }
  return out;
}

std::string write_plan_files(const PlanSearch& search, const std::string& dir) {
  std::filesystem::create_directories(dir);
  const PlanResult& best = search.top.front();
  const nlohmann::json scenario_json = nlohmann::json::parse(search.winner_scenario);
  Scenario scenario = scenario_from_json(scenario_json, "recommend", "");
  derive_model_costs(scenario);
  const int layers = search.layers;
  std::string written;
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    write_file_atomically(path, text);
    written += path + "\n";
  };
  write("plan.json", search.winner_scenario);
  const catalog::NamedSchedule named = catalog::generate_named(best.candidate.schedule, scenario);
  const std::string csv_path = (std::filesystem::path(dir) / "schedule.csv").string();
  std::string torchtitan;
  try {
    write("schedule.csv", to_pytorch_csv(named.problem, named.schedule));
    try {
      torchtitan = torchtitan_settings(named.problem, csv_path, layers);
    } catch (const InputError& e) {
      // A JSON list of string lists is also a TOML array: it pastes into the job's config file.
      torchtitan = fmt::format("# {}\n# in the job's TOML, under [parallelism]:\n# module_fqns_per_model_part = {}\n",
                               e.what(), models::torchtitan_module_fqns(plan_layers(best.candidate, layers)));
    }
  } catch (const InputError& e) {
    torchtitan = fmt::format("# {} has no PyTorch CSV: {}\n", best.candidate.schedule, e.what());
  }
  torchtitan += fmt::format("--parallelism.tensor_parallel_degree {}\n", best.candidate.tp);
  if (best.candidate.tp > 1) torchtitan += "--parallelism.enable_async_tensor_parallel false\n";
  torchtitan += fmt::format("--parallelism.data_parallel_replicate_degree {}\n", best.candidate.dp);
  torchtitan += "--parallelism.data_parallel_shard_degree 1\n";
  torchtitan += fmt::format("--training.local_batch_size {}\n", best.candidate.microbatch_size * best.candidate.microbatches);
  torchtitan += fmt::format("--parallelism.pipeline_parallel_microbatch_size {}\n", best.candidate.microbatch_size);
  torchtitan += fmt::format("--training.seq_len {}\n", search.seq_len);
  if (best.candidate.recompute != "none") {
    torchtitan += fmt::format("--activation_checkpoint.mode {}\n", best.candidate.recompute);
  }
  write("torchtitan.txt", torchtitan);
  write("megatron.txt", megatron_settings(best.candidate, search.global_batch, search.seq_len, layers));
  return written;
}

std::string pareto_svg(const PlanSearch& search) {
  constexpr double kWidth = 720, kHeight = 440, kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;
  double max_memory = search.device_GB, max_rate = 0;
  for (const PlanResult& r : search.pareto) {
    max_memory = std::max(max_memory, r.memory_GB);
    max_rate = std::max(max_rate, r.samples_per_s_per_gpu);
  }
  if (!(max_rate > 0)) max_rate = 1;
  const auto x = [&](double memory) { return kLeft + memory / max_memory * (kWidth - kLeft - kRight); };
  const auto y = [&](double rate) { return kHeight - kBottom - rate / (max_rate * 1.1) * (kHeight - kTop - kBottom); };
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"11\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"20\" font-size=\"14\">{}</text>\n",
      kWidth, kHeight, kLeft,
      xml_escape(fmt::format("Pareto plans: {} on {} GPUs ({}), global batch {}", search.model_label, search.gpus,
                             search.cluster_label, search.global_batch)));
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n", kLeft, kHeight - kBottom,
                     kWidth - kRight);
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n", kLeft, kTop, kHeight - kBottom);
  const double memory_step = round_axis_step(max_memory, 8);
  for (double m = 0; m <= max_memory + 1e-9; m += memory_step) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n", x(m), kHeight - kBottom + 15, m);
  }
  const double rate_step = round_axis_step(max_rate * 1.1, 6);
  for (double r = 0; r <= max_rate * 1.1 + 1e-12; r += rate_step) {
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", kLeft - 5, y(r) + 4, r);
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">memory per device (GB)</text>\n",
                     (kLeft + kWidth - kRight) / 2, kHeight - 12);
  out += fmt::format("<text x=\"15\" y=\"{}\" transform=\"rotate(-90 15 {})\" text-anchor=\"middle\">samples/s/GPU</text>\n",
                     (kTop + kHeight - kBottom) / 2, (kTop + kHeight - kBottom) / 2);
  out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"red\" stroke-dasharray=\"4 3\"/>\n",
                     x(search.device_GB), kTop, kHeight - kBottom);
  std::string points;
  for (const PlanResult& r : search.pareto) points += fmt::format("{:.1f},{:.1f} ", x(r.memory_GB), y(r.samples_per_s_per_gpu));
  out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#4477aa\"/>\n", points);
  const PlanCandidate& winner = search.top.front().candidate;
  for (const PlanResult& r : search.pareto) {
    const bool is_winner = r.candidate.label() == winner.label();
    out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"><title>{}</title></circle>\n",
                       x(r.memory_GB), y(r.samples_per_s_per_gpu), is_winner ? 6 : 3.5, is_winner ? "#cc3311" : "#4477aa",
                       xml_escape(fmt::format("{}: {:.4g} samples/s/GPU, {:.1f} GB", r.candidate.label(),
                                              r.samples_per_s_per_gpu, r.memory_GB)));
  }
  out += "</svg>\n";
  return out;
}

}  // namespace zb::plan
