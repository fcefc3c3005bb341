// The model: gradients against finite differences, the F/B/W memory model, ordered accumulation.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/cpu/cpu_device.h"
#include "exec/runtime/model_config.h"
#include "exec/runtime/stage_model.h"

namespace zb::exec {
namespace {

ModelConfig tiny() {
  ModelConfig config;
  config.layers = 2;
  config.hidden = 8;
  config.microbatch_size = 2;
  config.seed = 3;
  return config;
}

CpuDevice& device() {
  static CpuDevice d(0, CpuDevice::Clock::now());
  return d;
}

Tensor upload(const std::vector<float>& values, int rows, int cols) {
  Tensor t = device().alloc(rows, cols);
  device().upload(t, values);
  return t;
}

// Loss of one microbatch (the model's mean-squared error) with one parameter or input nudged.
double loss_with(const ModelConfig& config, int stages, int stage, int layer, int param,
                 std::size_t index, float delta, bool nudge_input) {
  StageModel model(device(), config, stage, stages, 1);
  model.begin_step();
  std::vector<float> input = synthetic_input(config, 0, 0);
  if (nudge_input) {
    input[index] += delta;
  } else if (delta != 0) {
    auto values = device().download(model.params()[static_cast<std::size_t>(layer)][static_cast<std::size_t>(param)]);
    values[index] += delta;
    device().upload(model.params()[static_cast<std::size_t>(layer)][static_cast<std::size_t>(param)], values);
  }
  Tensor x = upload(input, config.microbatch_size, config.hidden);
  Tensor target = upload(synthetic_target(config, 0, 0), config.microbatch_size, config.hidden);
  model.forward(0, x, target);
  return model.loss_sum() / (config.microbatch_size * config.hidden);
}

TEST(ExecModel, GradientsMatchFiniteDifferences) {
  const ModelConfig config = tiny();
  // Stage 1 of 2 is the last stage but not the first, so B also returns dL/dinput.
  const int stages = 2;
  const int stage = 1;
  StageModel model(device(), config, stage, stages, 1);
  model.begin_step();
  Tensor x = upload(synthetic_input(config, 0, 0), config.microbatch_size, config.hidden);
  Tensor target = upload(synthetic_target(config, 0, 0), config.microbatch_size, config.hidden);
  model.forward(0, x, target);
  const std::vector<float> grad_input = device().download(model.backward_input(0, Tensor()));
  model.backward_weight(0);
  ASSERT_TRUE(model.gradients_complete());

  const float eps = 1e-2f;
  auto check = [&](double analytic, double plus, double minus, const std::string& what) {
    const double numeric = (plus - minus) / (2.0 * eps);
    EXPECT_NEAR(analytic, numeric, 2e-4 + 0.02 * std::abs(numeric)) << what;
  };
  for (int slot = 0; slot < model.layers().count(); ++slot) {
    for (int p = 0; p < kParamsPerLayer; ++p) {
      const auto grads = device().download(model.grads()[static_cast<std::size_t>(slot)][static_cast<std::size_t>(p)]);
      for (std::size_t index : {std::size_t{0}, std::size_t{5}, grads.size() - 1}) {
        check(grads[index], loss_with(config, stages, stage, slot, p, index, eps, false),
              loss_with(config, stages, stage, slot, p, index, -eps, false),
              std::string(param_name(p)) + " of block " + std::to_string(slot) + " [" +
                  std::to_string(index) + "]");
      }
    }
  }
  for (std::size_t index : {std::size_t{0}, std::size_t{3}, grad_input.size() - 1}) {
    check(grad_input[index], loss_with(config, stages, stage, 0, 0, index, eps, true),
          loss_with(config, stages, stage, 0, 0, index, -eps, true), "input");
  }
}

TEST(ExecModel, SavedTensorsFollowTheFBWMemoryModel) {
  // F saves x, u, z per block (9h floats per row); B frees u and keeps gy and gu (+h per row and
  // block, minus the last stage's loss gradient, which becomes the last block's gy); W frees all.
  ModelConfig config = tiny();
  config.layers = 4;
  const auto row_bytes = static_cast<std::size_t>(config.microbatch_size * config.hidden) * sizeof(float);
  for (int stage : {0, 1}) {
    StageModel model(device(), config, stage, 2, 2);
    model.begin_step();
    const int k = model.layers().count();
    ASSERT_EQ(k, 2);
    Tensor x = upload(synthetic_input(config, 0, 0), config.microbatch_size, config.hidden);
    Tensor target = upload(synthetic_target(config, 0, 0), config.microbatch_size, config.hidden);
    model.forward(0, x, target);
    const bool last = stage == 1;
    EXPECT_EQ(model.saved_bytes(), k * 9 * row_bytes + (last ? row_bytes : 0)) << "stage " << stage;
    Tensor grad = upload(synthetic_target(config, 1, 0), config.microbatch_size, config.hidden);
    model.backward_input(0, grad);
    EXPECT_EQ(model.saved_bytes(), k * 10 * row_bytes) << "stage " << stage;
    model.backward_weight(0);
    EXPECT_EQ(model.saved_bytes(), 0u);
  }
}

TEST(ExecModel, WeightGradientsAreSummedInMicrobatchOrderWhateverTheWOrder) {
  const ModelConfig config = tiny();
  const int m = 4;
  auto run = [&](const std::vector<int>& w_order) {
    StageModel model(device(), config, 0, 1, m);
    model.begin_step();
    for (int mb = 0; mb < m; ++mb) {
      Tensor x = upload(synthetic_input(config, 0, mb), config.microbatch_size, config.hidden);
      Tensor target = upload(synthetic_target(config, 0, mb), config.microbatch_size, config.hidden);
      model.forward(mb, x, target);
      model.backward_input(mb, Tensor());
    }
    for (int mb : w_order) {
      EXPECT_FALSE(model.gradients_complete());
      model.backward_weight(mb);
    }
    EXPECT_TRUE(model.gradients_complete());
    EXPECT_EQ(model.parked_bytes(), 0u);
    std::vector<std::vector<float>> grads;
    for (auto& layer : model.grads()) {
      for (auto& g : layer) grads.push_back(device().download(g));
    }
    return grads;
  };
  const auto in_order = run({0, 1, 2, 3});
  EXPECT_EQ(run({3, 1, 0, 2}), in_order);  // bitwise, not approximately
  EXPECT_EQ(run({2, 3, 1, 0}), in_order);
}

TEST(ExecModel, PartitionAndInitialWeightsDoNotDependOnEachOther) {
  EXPECT_EQ(layers_of_stage(0, 3, 8).begin, 0);
  EXPECT_EQ(layers_of_stage(0, 3, 8).end, 3);
  EXPECT_EQ(layers_of_stage(1, 3, 8).end, 6);
  EXPECT_EQ(layers_of_stage(2, 3, 8).end, 8);
  ModelConfig config = tiny();
  // A layer's weights depend on the seed and the layer only, never on which stage holds it.
  StageModel whole(device(), config, 0, 1, 1);
  StageModel second(device(), config, 1, 2, 1);
  EXPECT_EQ(whole.download_weights()[1], second.download_weights()[0]);
  config.seed = 4;
  EXPECT_NE(initial_param(config, 1, kW1), initial_param(tiny(), 1, kW1));
}

}  // namespace
}  // namespace zb::exec
