// The CUDA fabric's channels: one per stage boundary and direction, prepared before a run, each
// FIFO on its own even when several share a device pair (GPU).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "exec/cuda/detail/cuda_backend.h"
#include "tests/exec/cuda/gpu_test_support.h"

namespace zb::exec::cuda {
namespace {

std::unique_ptr<CudaBackend> two_devices(bool gpus) {
  if (gpus) return std::make_unique<CudaBackend>(parse_device_set("cuda:0,1", 2), CudaOptions{});
  CudaOptions options;
  options.sm_partition = SmPartition::streams;
  return std::make_unique<CudaBackend>(parse_device_set("virtual:2", 2), options);
}

std::vector<float> filled(std::size_t count, float first) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = first + static_cast<float>(i);
  return values;
}

TEST(CudaFabric, AChannelThatWasNotPreparedIsRefused) {
  ZB_SKIP_WITHOUT_GPU();
  auto backend = two_devices(false);
  Tensor x = backend->device(0).alloc(2, 2);
  try {
    backend->fabric().send(0, 1, MessageTag{0, 0, 1, 0}, x);
    FAIL() << "expected ExecError";
  } catch (const ExecError& error) {
    EXPECT_NE(std::string(error.what()).find("was not prepared"), std::string::npos) << error.what();
  }
}

// Stages 0..3 on devices 0,1,0,1 (interleaved): channels 0->1 and 2->3 both go device 0 -> 1.
// Device 0 sends on 0->1 first, device 1 receives 2->3 first; with one NCCL communicator per
// device pair the two equal-size tensors would be swapped.
class CudaFabricOrder : public ::testing::TestWithParam<bool> {};

TEST_P(CudaFabricOrder, ChannelsSharingADevicePairDoNotSwapTensors) {
  ZB_SKIP_WITHOUT_GPU();
  const bool gpus = GetParam();
  if (gpus && test::gpu_count() < 2) GTEST_SKIP() << "needs 2 GPUs, have " << test::gpu_count();
  auto backend = two_devices(gpus);
  backend->prepare_channels({0, 1, 0, 1});
  const std::vector<float> first = filled(32, 1.0f);
  const std::vector<float> second = filled(32, 1000.0f);
  std::vector<float> got_first, got_second;
  Fabric& fabric = backend->fabric();
  for (int step = 0; step < 2; ++step) {  // a second run reuses the communicators
    backend->run_on_devices([&](int d) {
      Device& device = backend->device(d);
      if (d == 0) {
        Tensor a = device.alloc(4, 8);
        Tensor b = device.alloc(4, 8);
        device.upload(a, first);
        device.upload(b, second);
        fabric.send(0, 1, MessageTag{step, 0, 1, 0}, std::move(a));
        fabric.send(0, 1, MessageTag{step, 2, 3, 0}, std::move(b));
      } else {
        const Tensor b = fabric.recv(0, 1, MessageTag{step, 2, 3, 0}, device);
        const Tensor a = fabric.recv(0, 1, MessageTag{step, 0, 1, 0}, device);
        got_second = device.download(b);
        got_first = device.download(a);
      }
    });
    EXPECT_EQ(got_first, first) << "step " << step << ": " << backend->summary();
    EXPECT_EQ(got_second, second) << "step " << step << ": " << backend->summary();
  }
}

std::string order_case_name(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "gpus" : "virtual";
}

INSTANTIATE_TEST_SUITE_P(VirtualAndGpus, CudaFabricOrder, ::testing::Values(false, true),
                         order_case_name);

}  // namespace
}  // namespace zb::exec::cuda
