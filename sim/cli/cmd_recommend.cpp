// zbsim recommend: the fastest training plans for a model, a cluster and a global batch (the search
// is sim/app/plan/plan_search.h, the plan's files sim/app/plan/plan_files.h).
#include <unistd.h>

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "sim/app/plan/plan_files.h"
#include "sim/app/plan/plan_json.h"
#include "sim/app/plan/plan_search.h"
#include "sim/cli/commands.h"
#include "sim/cli/common/problem_options.h"
#include "sim/app/catalog/result_table.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/app/sweep/progress.h"

namespace zb::cli {

namespace po = boost::program_options;

namespace {

std::string table_text(const plan::PlanSearch& search) {
  std::string out = fmt::format("{} on {} GPUs ({}, {}, {:g} GB each), global batch {}, sequence {}\n",
                                search.model_label, search.gpus, search.cluster_label, search.hardware_label,
                                search.device_GB, search.global_batch, search.seq_len);
  out += fmt::format("searched {} candidates: {} pruned on memory before scheduling, {} pruned by the step-time bound, "
                     "{} evaluated ({} over memory, {} not buildable)\n\n",
                     search.candidates, search.pruned_memory, search.pruned_bound, search.evaluated, search.over_limit,
                     search.unsupported);
  out += fmt::format("{:>2}  {:<50} {:>9} {:>9} {:>9} {:>10} {:>6} {:>7}  {}\n", "#", "plan", "step s", "simgrid s",
                     "samp/s/GPU", "tokens/s", "MFU", "mem GB", "why it loses to #1");
  for (std::size_t k = 0; k < search.top.size(); ++k) {
    const auto& r = search.top[k];
    const auto& c = r.candidate;
    std::string plan = fmt::format("pp{} tp{} dp{}{} {}{} mbs{} m{} {}{}{}{}", c.pp, c.tp, c.dp,
                                   c.ep > 1 ? fmt::format(" ep{}", c.ep) : "", c.schedule,
                                   c.chunks > 1 ? fmt::format(" v{}", c.chunks) : "", c.microbatch_size, c.microbatches,
                                   c.split == "even" ? "" : c.split + " ", c.recompute == "none" ? "" : "rc=" + c.recompute + " ",
                                   c.offload_chunks > 0 ? fmt::format("offload={} ", c.offload_chunks) : "",
                                   c.sharding == "none" ? "" : c.sharding);
    while (!plan.empty() && plan.back() == ' ') plan.pop_back();
    out += fmt::format("{:>2}  {:<50} {:>9.3f} {:>9} {:>10.4f} {:>10.0f} {:>5.1f}% {:>7.1f}  {}\n", k + 1, plan,
                       r.step_time_s, r.simgrid_step_time_s ? fmt::format("{:.3f}", *r.simgrid_step_time_s) : "-",
                       r.samples_per_s_per_gpu, r.tokens_per_s, 100 * r.mfu, r.memory_GB,
                       k == 0 ? "best" : r.loses_because);
  }
  return out;
}

}  // namespace

int run_recommend(int argc, char** argv) {
  po::options_description options("Recommend");
  options.add_options()
      ("model", po::value<std::string>(), "transformer preset (models/transformers/) or JSON file")
      ("cluster", po::value<std::string>(), "cluster preset (models/clusters/) or JSON file")
      ("hardware", po::value<std::string>(),
       "hardware preset (models/hardware/); default: the one whose bf16 peak is the cluster's GPU peak")
      ("global-batch", po::value<int>(), "sequences per optimizer step over all data-parallel replicas")
      ("seq", po::value<int>(), "sequence length (default: the model's)")
      ("gpus", po::value<int>(), "GPUs to use (default: all of the cluster's)")
      ("top", po::value<int>()->default_value(10), "plans to list")
      ("jobs", po::value<int>(), "parallel workers (default: the number of cores)")
      ("no-simgrid", po::bool_switch(), "rank by the evaluator only (SimGrid re-runs the top plans when built)")
      ("cost-model", po::value<std::string>()->default_value("calibrated"),
       "calibrated (the hardware preset's efficiencies fitted to measured runs) | roofline (uncalibrated)")
      ("format", po::value<std::string>()->default_value("table"), "table | json")
      ("out", po::value<std::string>(),
       "folder for the winning plan: plan.json (zbsim simulate --scenario), schedule.csv, torchtitan.txt, megatron.txt")
      ("svg", po::value<std::string>(), "write the Pareto chart (memory per device vs samples/s/GPU) as SVG");
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim recommend --model M --cluster C --global-batch B [--seq S] [--gpus N] [--hardware H]\n"
                          "       [--top 10] [--jobs N] [--no-simgrid] [--cost-model calibrated|roofline]\n"
                          "       [--format table|json] [--out DIR] [--svg F]",
                          "  zbsim recommend --model llama3-8b --cluster 1x8-nvlink --hardware h100-sxm --global-batch 64\n"
                          "  zbsim recommend --model llama3-70b --cluster 8x8-ib400 --hardware h100-sxm --global-batch 128 --out plan",
                          {"svg"})) {
    return 0;
  }
  for (const char* required : {"model", "cluster", "global-batch"}) {
    if (!values.count(required)) throw InputError(fmt::format("--{}: missing", required));
  }
  const std::string format = values["format"].as<std::string>();
  if (format != "table" && format != "json") {
    throw InputError(fmt::format("--format: unknown format '{}' (expected table or json)", format));
  }
  plan::PlanQuery query;
  query.model = values["model"].as<std::string>();
  query.cluster = values["cluster"].as<std::string>();
  if (values.count("hardware")) query.hardware = values["hardware"].as<std::string>();
  query.global_batch = values["global-batch"].as<int>();
  if (values.count("seq")) query.seq_len = values["seq"].as<int>();
  if (values.count("gpus")) query.gpus = values["gpus"].as<int>();
  query.top = values["top"].as<int>();
  if (query.top < 1) throw InputError(fmt::format("--top: {} (expected 1 or more)", query.top));
  query.jobs = values.count("jobs") ? values["jobs"].as<int>()
                                    : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  query.confirm_simgrid = !values["no-simgrid"].as<bool>();
  query.cost_model = parse_cost_model(values["cost-model"].as<std::string>());
  if (values.count("out")) {
    // The folder is created when the plan is written; its parent must exist now, before the search.
    const auto parent = std::filesystem::absolute(values["out"].as<std::string>()).parent_path();
    if (!std::filesystem::is_directory(parent)) {
      throw InputError(fmt::format("--out: {}: folder '{}' does not exist", values["out"].as<std::string>(), parent.string()));
    }
  }

  // The bar counts the candidates left after memory pruning; the bound's cut completes it.
  std::optional<sweep::Progress> progress;
  long shown = 0;
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  const plan::PlanSearch search = plan::search_plans(query, [&](long done, long total) {
    if (!terminal) return;
    if (!progress) progress.emplace(total, true);
    for (; shown < done; ++shown) progress->tick();
  });
  if (progress) progress->finish();
  if (values.count("svg")) write_file_atomically(values["svg"].as<std::string>(), plan::pareto_svg(search));
  std::string written;
  if (values.count("out")) written = plan::write_plan_files(search, values["out"].as<std::string>());
  std::cout << (format == "json" ? plan::plan_search_json(search).dump(2) + "\n" : table_text(search));
  if (format == "table" && !written.empty()) std::cout << "\nwrote\n" << written;
  return 0;
}

}  // namespace zb::cli
