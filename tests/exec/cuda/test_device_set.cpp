// The --devices and --precision parsers of the CUDA backend (no GPU needed).
#include <gtest/gtest.h>

#include "exec/cuda/detail/device_set.h"
#include "exec/cuda/detail/precision.h"
#include "sim/support/error.h"

namespace zb::exec::cuda {
namespace {

TEST(DeviceSet, EmptyMeansOneGpuPerDevice) {
  const DeviceSet set = parse_device_set("", 3);
  EXPECT_EQ(set.kind, DeviceSet::Kind::gpus);
  EXPECT_EQ(set.ordinals, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(set.count, 3);
  EXPECT_EQ(set.describe(), "cuda:0,1,2");
}

TEST(DeviceSet, ExplicitGpus) {
  const DeviceSet set = parse_device_set("cuda:2,0,3,1", 4);
  EXPECT_EQ(set.ordinals, (std::vector<int>{2, 0, 3, 1}));
  EXPECT_EQ(set.count, 4);
}

TEST(DeviceSet, VirtualDevicesOnOneGpu) {
  const DeviceSet set = parse_device_set("virtual:4", 4);
  EXPECT_EQ(set.kind, DeviceSet::Kind::virtual_gpu);
  EXPECT_EQ(set.ordinals, (std::vector<int>{0}));
  EXPECT_EQ(set.count, 4);
  EXPECT_EQ(parse_device_set("virtual:2@3", 2).ordinals, (std::vector<int>{3}));
  EXPECT_EQ(parse_device_set("virtual:2@3", 2).describe(), "virtual:2 on cuda:3");
}

TEST(DeviceSet, RefusesMalformedText) {
  for (const char* text : {"cuda:", "cuda:0,", "cuda:a", "cuda:0,0", "virtual:", "virtual:0",
                           "virtual:2@", "virtual:x", "gpu:0", "cuda:-1"}) {
    EXPECT_THROW(parse_device_set(text, 2), InputError) << text;
  }
}

TEST(DeviceSet, CountMustMatchP) {
  try {
    parse_device_set("cuda:0,1", 4);
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("--p is 4"), std::string::npos) << error.what();
  }
  EXPECT_THROW(parse_device_set("virtual:3", 2), InputError);
}

TEST(Precision, ParsesBothNames) {
  EXPECT_EQ(parse_precision("fp32"), Precision::fp32);
  EXPECT_EQ(parse_precision("bf16"), Precision::bf16);
  EXPECT_EQ(precision_name(Precision::bf16), "bf16");
  EXPECT_THROW(parse_precision("fp16"), InputError);
}

}  // namespace
}  // namespace zb::exec::cuda
