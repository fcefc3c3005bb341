// Every shipped preset loads, and names, paths and bad values resolve as documented.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/cost_model.h"
#include "sim/support/error.h"
#include "models/presets.h"
#include "models/setup_infeasible.h"
#include "sim/app/catalog/model_costs.h"
#include "sim/app/catalog/preset_files.h"

namespace zb::models {
namespace {

TEST(Presets, EveryTransformerAndHardwarePresetLoads) {
  const auto models = preset_names("transformers");
  const auto hardware = preset_names("hardware");
  EXPECT_GE(models.size(), 9u);
  EXPECT_EQ(hardware, (std::vector<std::string>{"a100-80gb", "a100-80gb-pcie", "h100-96gb-500w", "h100-sxm", "h200"}));
  for (const auto& model : models) {
    for (const auto& gpu : hardware) {
      const nlohmann::json scenario = {{"model", model}, {"hardware", gpu}};
      const ModelSetup setup = model_setup_from_json(scenario, model + "/" + gpu, ".", catalog::read_preset_file);
      EXPECT_GT(setup.model.total_params(), 1e9) << model;
      EXPECT_GT(setup.hardware.peak_tflops_bf16, 300) << gpu;
      EXPECT_GT(setup.interconnect.inter_node.bandwidth_GBps, 0) << gpu;
    }
  }
}

// GPT-OSS-120B's checkpoint holds 116,829,156,672 parameters ("116.8B" on its model card): the
// preset counts all but the router biases (128 per layer) and attention sinks (64 per layer).
TEST(Presets, GptOssCountsItsCheckpointsParameters) {
  const ModelSetup setup = model_setup_from_json({{"model", "gpt-oss-120b"}, {"hardware", "h100-sxm"}}, "gpt-oss",
                                                 ".", catalog::read_preset_file);
  EXPECT_DOUBLE_EQ(setup.model.total_params(), 116829156672.0 - 36 * (128 + 64));
  EXPECT_EQ(setup.model.sliding_window, 128);
  EXPECT_DOUBLE_EQ(setup.model.sliding_window_share, 0.5);
}

// DeepSeek-V3 by hand from its config: latent attention 7168 x (1536 + 512 + 64) + 1536 x 128 x 192
// + 512 x 128 x 256 + 128 x 128 x 7168 and the latents' norms 2048; 3 dense layers of SwiGLU
// 3 x 7168 x 18432, 58 of 257 experts of 3 x 7168 x 2048 and a router of 7168 x 256; two norms per
// layer; untied vocabulary 129280 x 7168 twice and the final norm: 671.03B, the model card's 671B.
TEST(Presets, DeepSeekV3CountsItsParametersFromItsConfig) {
  const ModelSetup setup = model_setup_from_json({{"model", "deepseek-v3"}, {"hardware", "h100-sxm"}}, "deepseek",
                                                 ".", catalog::read_preset_file);
  const double attention = 7168.0 * 2112 + 1536.0 * 128 * 192 + 512.0 * 128 * 256 + 128.0 * 128 * 7168 + 2048;
  const double norms = 2 * 7168.0;
  const double dense = attention + norms + 3 * 7168.0 * 18432;
  const double moe = attention + norms + 257 * 3 * 7168.0 * 2048 + 7168.0 * 256;
  EXPECT_DOUBLE_EQ(setup.model.total_params(), 3 * dense + 58 * moe + 2 * 129280.0 * 7168 + 7168);
  EXPECT_NEAR(setup.model.total_params() / 1e9, 671.03, 0.01);
  EXPECT_EQ(setup.model.q_hidden(), 128 * 192);
  EXPECT_EQ(setup.model.o_hidden(), 128 * 128);
}

// Mixtral by hand from their configs: attention h(q + 2kv) + qh, 8 SwiGLU experts of 3hf, a router
// of 8h, two norms; untied vocabulary twice and the final norm. The model cards' 46.7B and 141B.
TEST(Presets, MixtralCountsItsParametersFromItsConfig) {
  const auto total = [](const char* preset) {
    return model_setup_from_json({{"model", preset}, {"hardware", "h100-sxm"}}, preset, ".", catalog::read_preset_file)
        .model.total_params();
  };
  const auto expected = [](double L, double h, double kv, double f, double V) {
    return L * (h * (h + 2 * kv) + h * h + 8 * 3 * h * f + 8 * h + 2 * h) + 2 * V * h + h;
  };
  EXPECT_DOUBLE_EQ(total("mixtral-8x7b"), expected(32, 4096, 1024, 14336, 32000));
  EXPECT_NEAR(total("mixtral-8x7b") / 1e9, 46.70, 0.01);
  EXPECT_DOUBLE_EQ(total("mixtral-8x22b"), expected(56, 6144, 1024, 16384, 32768));
  EXPECT_NEAR(total("mixtral-8x22b") / 1e9, 140.63, 0.01);
}

TEST(Presets, ClusterPresetsOfTheEngineAreReadForLinks) {
  const nlohmann::json scenario = {{"model", "gpt-1.5b"}, {"hardware", "a100-80gb"}, {"cluster", "4x8-ib200"}};
  const ModelSetup setup = model_setup_from_json(scenario, "s", ".", catalog::read_preset_file);
  EXPECT_EQ(setup.interconnect.gpus_per_node, 8);
  EXPECT_EQ(setup.interconnect.nodes, 4);
  EXPECT_EQ(setup.cluster_label, "4x8-ib200");
  EXPECT_FALSE(setup.cluster_path.empty());
  EXPECT_DOUBLE_EQ(setup.interconnect.link_between(7, 8).bandwidth_GBps, 25);
  EXPECT_DOUBLE_EQ(setup.interconnect.link_between(6, 7).bandwidth_GBps, 450);
}

TEST(Presets, UnknownNamesListTheKnownOnes) {
  try {
    model_setup_from_json({{"model", "gpt-9b"}, {"hardware", "a100-80gb"}}, "s.json", ".", catalog::read_preset_file);
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("s.json: field 'model' is 'gpt-9b': no such preset"), std::string::npos) << message;
    EXPECT_NE(message.find("llama3-8b"), std::string::npos) << message;
  }
  EXPECT_THROW(model_setup_from_json({{"model", "gpt-1.5b"}}, "s.json", ".", catalog::read_preset_file), InputError);
  EXPECT_THROW(model_setup_from_json({{"model", "no/such.json"}, {"hardware", "h200"}}, "s.json", ".", catalog::read_preset_file), InputError);
  EXPECT_THROW(model_setup_from_json({{"model", "gpt-1.5b"}, {"hardware", "h200"}, {"mfu", 1.5}}, "s.json", ".", catalog::read_preset_file),
               InputError);
}

// The paper's 1.5B setting (b = 6, 8 A100s, its split): t_f of a 3-layer stage at 50% MFU.
TEST(Presets, PaperGptOnA100) {
  const nlohmann::json scenario = {{"model", "gpt-1.5b"}, {"hardware", "a100-80gb"}, {"microbatch_size", 6},
                                   {"split", "paper"}, {"mfu", 0.5}};
  const ModelSetup setup = model_setup_from_json(scenario, "s", ".", catalog::read_preset_file);
  ProblemSpec spec;
  spec.devices = 8;
  spec.microbatches = 24;
  catalog::apply_model_costs(setup, spec, {}, "s");
  ASSERT_EQ(spec.t_f.size(), 8u);
  EXPECT_DOUBLE_EQ(spec.t_f[1], 3 * 840739848192.0 / (312e12 * 0.5) * 1e3);  // about 16.2 ms
  EXPECT_NEAR(spec.t_f[1], 16.17, 0.01);
}

}  // namespace
}  // namespace zb::models

namespace zb::models {
namespace {

std::string setup_error(const nlohmann::json& scenario) {
  try {
    model_setup_from_json(scenario, "s.json", ".", catalog::read_preset_file);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Presets, ParallelismFieldsAreCheckedNamingFieldAndValue) {
  const nlohmann::json base = {{"model", "llama3-70b"}, {"hardware", "h100-sxm"}};
  auto with = [&](const char* key, nlohmann::json value) {
    nlohmann::json scenario = base;
    scenario[key] = std::move(value);
    return setup_error(scenario);
  };
  EXPECT_EQ(with("tensor_parallel", 3), "s.json: field 'tensor_parallel' is 3: it must divide the model's heads (64)");
  EXPECT_EQ(with("tensor_parallel", 16),
            "s.json: field 'tensor_parallel' is 16: it must divide the model's kv_heads (8)");
  EXPECT_EQ(with("tensor_parallel", 0), "s.json: field 'tensor_parallel' is 0: expected an integer >= 1");
  EXPECT_EQ(with("data_parallel", 0), "s.json: field 'data_parallel' is 0: expected an integer >= 1");
  EXPECT_EQ(with("sharding", "zero-4"),
            "s.json: field 'sharding' is \"zero-4\": expected one of none, zero-1, zero-2, zero-3, fsdp");
  EXPECT_EQ(with("recompute", "partial"),
            "s.json: field 'recompute' is \"partial\": expected one of none, selective, full");
  EXPECT_EQ(with("sequence_parallel", 1), "s.json: field 'sequence_parallel' is 1: expected true or false");
  EXPECT_EQ(with("context_parallel", 0), "s.json: field 'context_parallel' is 0: expected an integer >= 1");
  EXPECT_EQ(with("expert_parallel", 2), "s.json: field 'expert_parallel' is 2, but the model has no experts");
  nlohmann::json moe = {{"model", "qwen3-30b-a3b"}, {"hardware", "h100-sxm"}, {"data_parallel", 8}};
  moe["expert_parallel"] = 3;
  EXPECT_EQ(setup_error(moe), "s.json: field 'expert_parallel' is 3: it must divide the model's moe_experts (128)");
  moe["expert_parallel"] = 16;
  EXPECT_EQ(setup_error(moe),
            "s.json: field 'expert_parallel' is 16: it must divide the GPUs of one stage, tensor x context x data "
            "parallel (8)");
  moe["expert_parallel"] = 8;
  EXPECT_EQ(setup_error(moe), "");
  moe["tensor_parallel"] = 2;
  EXPECT_EQ(setup_error(moe),
            "s.json: field 'tensor_parallel' is 2 on a mixture-of-experts model: it needs \"sequence_parallel\": true");
  nlohmann::json overlapped = base;  // tensor-parallel all-reduces: no overlap is modelled
  overlapped["tensor_parallel"] = 8;
  overlapped["tp_comm_overlap"] = true;
  EXPECT_EQ(setup_error(overlapped), "s.json: field 'tp_comm_overlap' is true, but it needs \"sequence_parallel\": true");
  overlapped["sequence_parallel"] = true;
  EXPECT_EQ(setup_error(overlapped), "");
  EXPECT_EQ(with("context_parallel", 3),
            "s.json: field 'context_parallel' is 3: the sequence (8192) must split into 2 x 3 equal chunks (each GPU "
            "takes one from each end, to balance the causal mask)");
  // A tensor-parallel group larger than a node (8 GPUs) would cross the NICs.
  nlohmann::json gpt = {{"model", "gpt-1.5b"}, {"hardware", "a100-80gb"}, {"tensor_parallel", 16}};
  EXPECT_NE(setup_error(gpt).find("it must divide"), std::string::npos) << setup_error(gpt);
  nlohmann::json inline_gpu = base;
  inline_gpu["hardware"] = nlohmann::json::parse(R"({"peak_tflops_bf16": 1, "memory_bandwidth_GBps": 1,
      "sm_count": 1, "memory_GB": 1, "nvlink": {"bandwidth_GBps": 1}, "nic": {"bandwidth_GBps": 1},
      "gemm_sustained_fraction": 0})");
  EXPECT_NE(setup_error(inline_gpu).find("field 'gemm_sustained_fraction' is 0: expected a fraction in (0, 1]"),
            std::string::npos)
      << setup_error(inline_gpu);
}

// Llama-3 70B on 8 H100s: 80 layers, 10 per device, 8.7e9 parameters on a middle device at 16
// bytes = 139 GB, which does not fit; the message says what each part takes and which knobs split
// it. Tensor parallel 8 over 64 GPUs divides it by 8 and fits.
TEST(Presets, WhatDoesNotFitIsReportedPartByPart) {
  nlohmann::json scenario = {{"model", "llama3-70b"}, {"hardware", "h100-sxm"}, {"flash_attention", true}};
  ProblemSpec spec;
  spec.devices = 8;
  spec.microbatches = 16;
  try {
    catalog::apply_model_costs(model_setup_from_json(scenario, "s.json", ".", catalog::read_preset_file), spec, {}, "s.json");
    FAIL();
  } catch (const SetupInfeasible& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("s.json: device 0 needs"), std::string::npos) << message;
    EXPECT_NE(message.find("parameters"), std::string::npos) << message;
    EXPECT_NE(message.find("optimizer state"), std::string::npos) << message;
    EXPECT_NE(message.find("tensor_parallel 1, data_parallel 1, sharding none, recompute none"), std::string::npos)
        << message;
  }
  scenario["tensor_parallel"] = 8;
  const ModelSetup tp8 = model_setup_from_json(scenario, "s.json", ".", catalog::read_preset_file);
  const StageCosts costs = catalog::apply_model_costs(tp8, spec, {}, "s.json");
  EXPECT_GT(spec.mem_limit->value, 50);
  // Sharding over 4 data-parallel replicas: less static memory at every level.
  double previous = costs.static_GB[1];
  for (const char* sharding : {"zero-1", "zero-2", "zero-3"}) {
    scenario["data_parallel"] = 4;
    scenario["sharding"] = sharding;
    ProblemSpec again = spec;
    const StageCosts sharded = catalog::apply_model_costs(model_setup_from_json(scenario, "s.json", ".", catalog::read_preset_file), again, {}, "s.json");
    EXPECT_LT(sharded.static_GB[1], previous) << sharding;
    previous = sharded.static_GB[1];
  }
}


// A preset's calibration replaces the roofline's efficiencies unless the scenario asks for the
// roofline; fields at the hardware object's top level win over both.
TEST(Presets, CalibrationReplacesTheRooflineUnlessAskedNotTo) {
  nlohmann::json gpu = nlohmann::json::parse(R"({"peak_tflops_bf16": 100, "memory_bandwidth_GBps": 1000,
      "sm_count": 10, "memory_GB": 40, "nvlink": {"bandwidth_GBps": 100}, "nic": {"bandwidth_GBps": 10},
      "calibration": {"gemm_sustained_fraction": 0.6, "memory_sustained_fraction": 0.7, "kernel_overhead_us": 12,
                      "collective_efficiency": 0.5, "attention_sustained_fraction": 0.45, "misaligned_gemm_fraction": 0.3,
                      "fitted_on": "test rows",
                      "cross_validation": "none"}})");
  nlohmann::json scenario = {{"model", "gpt-1.5b"}, {"hardware", gpu}};
  const auto efficiency = [&] {
    return model_setup_from_json(scenario, "s", ".", catalog::read_preset_file).hardware.efficiency;
  };
  EXPECT_DOUBLE_EQ(efficiency().gemm_sustained_fraction, 0.6);
  EXPECT_DOUBLE_EQ(efficiency().memory_sustained_fraction, 0.7);
  EXPECT_DOUBLE_EQ(efficiency().kernel_overhead_us, 12);
  EXPECT_DOUBLE_EQ(efficiency().collective_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(efficiency().attention_sustained_fraction, 0.45);
  EXPECT_DOUBLE_EQ(efficiency().misaligned_gemm_fraction, 0.3);
  scenario["cost_model"] = "roofline";
  EXPECT_DOUBLE_EQ(efficiency().gemm_sustained_fraction, kGemmSustainedFraction);
  EXPECT_DOUBLE_EQ(efficiency().attention_sustained_fraction, kGemmSustainedFraction);
  EXPECT_DOUBLE_EQ(efficiency().misaligned_gemm_fraction, 1);
  EXPECT_DOUBLE_EQ(efficiency().kernel_overhead_us, 0);
  EXPECT_DOUBLE_EQ(efficiency().collective_efficiency, 1);
  scenario["hardware"]["kernel_overhead_us"] = 3;  // given: wins under either cost model
  EXPECT_DOUBLE_EQ(efficiency().kernel_overhead_us, 3);
  scenario.erase("cost_model");
  EXPECT_DOUBLE_EQ(efficiency().kernel_overhead_us, 3);
  EXPECT_DOUBLE_EQ(efficiency().gemm_sustained_fraction, 0.6);
  scenario["precision"] = "fp8";  // the inline GPU has no peak_tflops_fp8
  EXPECT_EQ(setup_error(scenario), "s.json: field 'precision' is \"fp8\", but inline has no FP8 tensor cores (no peak_tflops_fp8)");
  scenario["precision"] = "int4";
  EXPECT_EQ(setup_error(scenario), "s.json: field 'precision' is \"int4\": expected bf16, fp16, fp8, fp8-cs or fp8-rowwise");
  scenario.erase("precision");
  scenario["cost_model"] = "fitted";
  EXPECT_EQ(setup_error(scenario), "s.json: field 'cost_model' is \"fitted\": expected calibrated or roofline");
  scenario.erase("cost_model");
  scenario["hardware"]["calibration"].erase("fitted_on");
  EXPECT_EQ(setup_error(scenario), "s.json: field 'hardware': calibration: missing field 'fitted_on'");
  scenario["hardware"]["calibration"]["fitted_on"] = "test rows";
  scenario["hardware"]["calibration"].erase("attention_sustained_fraction");  // a file from before the field
  EXPECT_EQ(setup_error(scenario), "s.json: field 'hardware': calibration: missing field 'attention_sustained_fraction'");
}

// A shipped preset finds its calibration by its own name first, then by its architecture
// (models/calibration/), in the presets folder $ZB_MODELS_DIR names.
TEST(Presets, CalibrationFilesByPresetThenArchitecture) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("zb_calibration_files_" + std::to_string(::getpid()));
  fs::create_directories(root / "hardware");
  fs::create_directories(root / "calibration");
  fs::copy(presets_dir() / "transformers", root / "transformers", fs::copy_options::recursive);
  fs::copy(presets_dir() / "network", root / "network", fs::copy_options::recursive);
  const auto write = [&](const fs::path& path, const std::string& text) { std::ofstream(path) << text; };
  const std::string gpu = R"({"architecture": "testarch", "peak_tflops_bf16": 100, "memory_bandwidth_GBps": 1000,
      "sm_count": 10, "memory_GB": 40, "nvlink": {"bandwidth_GBps": 100}, "nic": "ib-hdr-200g"})";
  write(root / "hardware" / "own.json", gpu);
  write(root / "hardware" / "shared.json", gpu);
  const auto calibration = [](double gemm) {
    return fmt::format(R"({{"gemm_sustained_fraction": {}, "memory_sustained_fraction": 0.7, "kernel_overhead_us": 1,
        "collective_efficiency": 0.9, "attention_sustained_fraction": 0.5, "misaligned_gemm_fraction": 0.5, "fitted_on": "test",
        "cross_validation": "none"}})", gemm);
  };
  write(root / "calibration" / "testarch.json", calibration(0.55));
  write(root / "calibration" / "own.json", calibration(0.65));
  ::setenv("ZB_MODELS_DIR", root.c_str(), 1);
  const auto gemm = [](const char* preset) {
    const nlohmann::json scenario = {{"model", "gpt-1.5b"}, {"hardware", preset}};
    return model_setup_from_json(scenario, "s", ".", catalog::read_preset_file).hardware.efficiency.gemm_sustained_fraction;
  };
  const double own = gemm("own");
  const double shared = gemm("shared");
  ::unsetenv("ZB_MODELS_DIR");
  fs::remove_all(root);
  EXPECT_DOUBLE_EQ(own, 0.65);
  EXPECT_DOUBLE_EQ(shared, 0.55);
}

// Every kernel of a pass pays the overhead once: a layer's forward grows by a whole number of them.
TEST(Presets, KernelOverheadIsPaidPerKernel) {
  nlohmann::json scenario = {{"model", "gpt-1.5b"}, {"hardware", "a100-80gb"}, {"cost_model", "roofline"},
                             {"tensor_parallel", 2}};
  const auto t_f = [&](double overhead_us) {
    nlohmann::json s = scenario;
    s["hardware"] = catalog::read_preset_file(presets_dir() / "hardware" / "a100-80gb.json", "test");
    s["hardware"]["kernel_overhead_us"] = overhead_us;
    const ModelSetup setup = model_setup_from_json(s, "s", ".", catalog::read_preset_file);
    ProblemSpec spec;
    spec.devices = 2;
    spec.microbatches = 4;
    catalog::apply_model_costs(setup, spec, {}, "s");
    return spec.t_f[0];
  };
  const double kernels = (t_f(10) - t_f(0)) / 0.010;  // 10 us each, in ms
  EXPECT_NEAR(kernels, std::round(kernels), 1e-6);
  EXPECT_GT(kernels, 100);  // 11 layers of a dozen kernels and more, plus the embedding
}

}  // namespace
}  // namespace zb::models
