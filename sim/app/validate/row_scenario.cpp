// From a measured row's columns to a scenario: what each framework does where the row is silent.
#include "sim/app/validate/row_scenario.h"

#include <fmt/format.h>

#include <regex>

#include "models/parallelism.h"
#include "sim/app/validate/detail/row_cells.h"
#include "sim/support/error.h"
#include "sim/app/validate/row_machine.h"

namespace zb::validate {

namespace {

struct Degrees {
  int tp = 0, pp = 0, vp = 1, cp = 1, dp = 0, ep = 1, fsdp = 0, mbs = 0, gbs = 0, gpus = 0;
};

Degrees degrees(const MeasuredRow& row, std::string_view file) {
  const auto get = [&](std::string_view column, int otherwise) { return whole_cell(row, column, file).value_or(otherwise); };
  Degrees d;
  d.tp = get("tp", 0);
  d.pp = get("pp", 0);
  d.vp = std::max(1, get("vp", 1));
  d.cp = std::max(1, get("cp", 1));
  d.dp = get("dp", 0);
  d.ep = std::max(1, get("ep", 1));
  d.fsdp = get("fsdp", 0);
  d.mbs = get("mbs", 0);
  d.gbs = get("gbs", 0);
  d.gpus = get("gpus", 0);
  return d;
}

// The zbsim generator of the row's schedule; "" when the row does not say (pp > 1) or zbsim has
// none.
std::string generator_of(const std::string& schedule, int pp) {
  if (pp == 1 && (schedule.empty() || schedule == "none")) return "1f1b";  // no pipeline: any schedule
  if (schedule == "1f1b") return "1f1b";
  if (schedule == "interleaved-1f1b") return "1f1b-i";
  if (schedule == "zb-i") return "zb-i";
  return "";
}

// Optimizer sharding without parameter sharding: NeMo and Megatron-Bridge run Megatron's
// distributed optimizer (ZeRO-1); Megatron-DeepSpeed's BLOOM runs ZeRO-1 unless a note says
// stage 0; SC21's scripts use plain DDP (--DDP-impl local/torch).
std::string sharding_of(const MeasuredRow& row, const Degrees& d, std::vector<std::string>& assumptions) {
  const std::string& framework = row.cell("framework");
  const std::string& notes = row.cell("notes");
  if (d.dp <= 1) return "none";
  if (d.fsdp > 1) return framework == "torchtitan" ? "fsdp" : "zero-3";
  if (framework.starts_with("nemo")) return "zero-1";
  if (framework == "megatron-deepspeed") return contains(notes, "ZeRO stage 0") ? "none" : "zero-1";
  if (framework == "megatron-lm" && contains(notes, "Megatron-Core")) {
    assumptions.push_back("distributed optimizer (ZeRO-1) assumed for Megatron-Core");
    return "zero-1";
  }
  return "none";
}

// Flash attention: every NeMo, Megatron-Core and torchtitan run; not the 2021-2022 Megatron-LM
// and Megatron-DeepSpeed runs.
bool flash_attention_of(const MeasuredRow& row) {
  const std::string& framework = row.cell("framework");
  return framework.starts_with("nemo") || framework == "torchtitan" || contains(row.cell("notes"), "Megatron-Core");
}

// Tensor-parallel communication overlapped with the GEMMs, where the row's notes say so: Megatron's
// --tp-comm-overlap ("TP-comm overlap", "DP/TP/PP comm overlap on") and torchtitan's async TP
// ("async TP", "+ AsyncTP"; not "without ... AsyncTP").
bool tp_comm_overlap_of(const MeasuredRow& row) {
  const std::string& notes = row.cell("notes");
  for (const char* said : {"TP-comm overlap", "TP/PP comm overlap on", "async TP", "+ AsyncTP"}) {
    if (contains(notes, said)) return true;
  }
  return false;
}

}  // namespace

RowScenario row_scenario(const MeasuredRow& row, std::string_view file) {
  RowScenario out;
  const Degrees d = degrees(row, file);
  auto& why = out.uncovered;
  auto& assumptions = out.assumptions;
  const std::string& precision = row.cell("precision");
  if (precision.empty()) assumptions.push_back("16-bit precision (the source says mixed precision)");
  else if (precision != "bf16" && precision != "fp16" && precision != "fp8" && precision != "fp8-cs") {
    why.push_back(fmt::format("precision '{}'", excerpt(precision)));
  }
  if (d.fsdp > 1 && d.dp > 0 && d.fsdp != d.dp) {
    why.push_back(fmt::format("parameters sharded over {} of the {} data-parallel replicas (HSDP)", d.fsdp, d.dp));
  }
  const RowMachine machine = row_machine(row);
  if (!machine.uncovered.empty()) why.push_back(machine.uncovered);
  out.hardware = machine.hardware;
  out.hardware_object = machine.hardware_object;
  out.architecture = machine.architecture;
  out.model = row_model(row, std::max(d.tp, 1), file);
  if (!out.model.uncovered.empty()) why.push_back(out.model.uncovered);
  assumptions.insert(assumptions.end(), out.model.assumptions.begin(), out.model.assumptions.end());
  if (d.tp == 0 || d.pp == 0 || d.dp == 0) why.push_back("tp, pp or dp not given");
  // A source that does not give the microbatch size or, with a pipeline, the schedule: one
  // sequence per microbatch (the frameworks' default) and plain 1F1B, both named.
  Degrees run = d;
  if (d.mbs == 0) {
    run.mbs = 1;
    assumptions.push_back("microbatch size 1 (not stated)");
  }
  if (d.gbs == 0) why.push_back("global batch not given");
  out.schedule = generator_of(row.cell("schedule"), d.pp);
  if (d.pp > 1 && out.schedule.empty() && row.cell("schedule").empty()) {
    out.schedule = "1f1b";
    assumptions.push_back("schedule 1F1B without interleaving (not stated)");
  } else if (d.pp > 1 && out.schedule.empty()) {
    why.push_back(fmt::format("schedule '{}'", excerpt(row.cell("schedule"))));
  }
  if (d.tp > 0 && d.pp > 0 && d.dp > 0 && d.gpus > 0 && d.tp * d.pp * d.cp * d.dp != d.gpus) {
    why.push_back(fmt::format("tp x pp x cp x dp = {} but gpus = {}", d.tp * d.pp * d.cp * d.dp, d.gpus));
  }
  const long per_step = static_cast<long>(run.mbs) * d.dp;
  if (per_step > 0 && d.gbs > 0 && d.gbs % per_step != 0) {
    why.push_back(fmt::format("gbs {} is not a multiple of mbs x dp = {}", d.gbs, per_step));
  }
  if (!why.empty()) return out;

  const bool interleaved = out.schedule == "1f1b-i" || out.schedule == "zb-i";
  const int chunks = interleaved ? d.vp : 1;
  if (interleaved && chunks < 2) {
    why.push_back("an interleaved schedule with vp < 2");
    return out;
  }
  if (out.model.layers % (d.pp * chunks) != 0) {
    assumptions.push_back(fmt::format("{} layers over {} stages: the first stages take one more", out.model.layers,
                                      d.pp * chunks));
  }
  std::string recompute = row.cell("recompute");
  if (recompute.empty()) {
    // A source that counts the recomputed forward in its FLOPs (SC21's Eq. 3) ran with it.
    const bool counted = contains(row.cell("notes"), "incl. recompute");
    recompute = counted ? "full" : "none";
    assumptions.push_back(counted ? "full recomputation (not stated; the source's FLOPs count it)"
                                  : "no recomputation (not stated)");
  }
  const bool tp_comm_overlap = d.tp > 1 && tp_comm_overlap_of(row);
  bool sequence_parallel = row.cell("sequence_parallel") == "1";
  if (row.cell("sequence_parallel").empty() && d.tp > 1) {
    sequence_parallel =
        tp_comm_overlap || row.cell("framework").starts_with("nemo") || row.cell("framework") == "torchtitan";
    assumptions.push_back(fmt::format("sequence parallel {} (not stated{})", sequence_parallel ? "on" : "off",
                                      tp_comm_overlap ? "; the TP communication overlap needs it" : ""));
  }
  if (tp_comm_overlap && !sequence_parallel) {
    why.push_back("TP communication overlap without sequence parallelism");
    return out;
  }
  nlohmann::json s;
  s["name"] = row.id();
  s["description"] = fmt::format("{} on {} GPUs ({})", row.cell("model"), d.gpus, row.cell("source"));
  s["model"] = out.model.object;
  s["hardware"] = machine.hardware;
  s["cluster"] = machine.cluster;
  s["microbatch_size"] = run.mbs;
  s["split"] = row.cell("notes").find("type:transformer|embed") != std::string::npos ? "paper" : "even";
  s["flash_attention"] = flash_attention_of(row);
  s["tensor_parallel"] = d.tp;
  s["context_parallel"] = d.cp;
  s["sequence_parallel"] = sequence_parallel;
  s["tp_comm_overlap"] = tp_comm_overlap;
  s["data_parallel"] = d.dp;
  s["expert_parallel"] = d.ep;
  s["sharding"] = sharding_of(row, d, assumptions);
  s["recompute"] = recompute;
  // NeMo's MoE rows name Megatron's recompute modules: 'selective recompute ["layernorm","moe_act"]'.
  static const std::regex modules_said(R"re(selective recompute \[([^\]]*)\])re");
  std::smatch said;
  const std::string& notes = row.cell("notes");
  if (recompute == "selective" && std::regex_search(notes, said, modules_said)) {
    static const std::regex quoted(R"re("+([a-z_]+)"+)re");
    nlohmann::json modules = nlohmann::json::array();
    const std::string list = said[1].str();
    models::RecomputeModules known;
    for (std::sregex_iterator it(list.begin(), list.end(), quoted), end; it != end; ++it) {
      const std::string module = (*it)[1].str();
      if (models::recompute_module_flag(known, module) != nullptr) {
        modules.push_back(module);
      } else {
        assumptions.push_back(fmt::format("recompute module {} not modelled", module));
      }
    }
    if (!modules.empty()) s["recompute_modules"] = modules;
  }
  // torchao's row-wise scaling, where the notes say so (torchtitan's "quantization: float8 rowwise").
  const bool rowwise = precision == "fp8" && contains(row.cell("notes"), "float8 rowwise");
  s["precision"] = precision.empty() ? "bf16" : rowwise ? "fp8-rowwise" : precision;
  // The row ran: its memory is judged apart from its time (validation.h), so no limit here.
  // DeepSpeed's pipeline engine and Megatron-LM's local DDP reduce the gradients after the whole
  // pipeline; the others overlap the reduction with the last backward passes.
  const bool reduce_after = row.cell("framework") == "megatron-deepspeed" || contains(row.cell("notes"), "DDP-impl local");
  s["problem"] = {{"p", d.pp},
                  {"dp_reduce_overlap", reduce_after ? 0.0 : 1.0},
                  {"m", d.gbs / per_step},
                  {"chunks", chunks},
                  {"placement", interleaved ? "interleaved" : "linear"},
                  {"mem_limit", 1e9}};
  s["schedules"] = nlohmann::json::array({out.schedule});
  out.scenario = std::move(s);
  return out;
}

}  // namespace zb::validate
