// Cluster descriptions: the presets load, every bad field is rejected with file, field and value.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "sim/simgrid/cluster.h"
#include "tests/simgrid/engine_test_support.h"
#include "sim/support/error.h"

namespace zb {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

json two_nodes() {
  return json::parse(R"({
    "name": "t", "nodes": 2, "gpus_per_node": 4, "gpu_tflops": 100,
    "intra_node": {"bandwidth_GBps": 100, "latency_us": 2},
    "inter_node": {"bandwidth_GBps": 10, "latency_us": 8, "nics_per_node": 2}
  })");
}

std::string error_of(const json& object) {
  try {
    cluster_from_json(object, "c.json");
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

TEST(Cluster, EveryPresetLoadsAndHoldsAPipeline) {
  int presets = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::source_path("models/clusters"))) {
    if (entry.path().extension() != ".json") continue;
    const ClusterSpec cluster = load_cluster_file(entry.path().string());
    EXPECT_FALSE(cluster.name.empty()) << entry.path();
    EXPECT_EQ(cluster.label(), entry.path().string());  // messages name the file
    EXPECT_NO_THROW(cluster.validate(entry.path().string(), cluster.gpu_count())) << entry.path();
    ++presets;
  }
  EXPECT_GE(presets, 3);
}

TEST(Cluster, ReadsFieldsAndMapsGpusToNics) {
  const ClusterSpec cluster = cluster_from_json(two_nodes(), "c.json");
  EXPECT_EQ(cluster.gpu_count(), 8);
  EXPECT_EQ(cluster.node_of_gpu(5), 1);
  // Two NICs per node: GPUs 0,1 share NIC 0, GPUs 2,3 NIC 1; node 1 starts at NIC 2.
  EXPECT_EQ(cluster.nic_of_gpu(0), 0);
  EXPECT_EQ(cluster.nic_of_gpu(1), 0);
  EXPECT_EQ(cluster.nic_of_gpu(3), 1);
  EXPECT_EQ(cluster.nic_of_gpu(4), 2);
  EXPECT_EQ(cluster.nic_of_gpu(7), 3);
  EXPECT_EQ(cluster.gpu_of_device(6), 6);
  // Round trip through JSON.
  const ClusterSpec again = cluster_from_json(to_json(cluster), "again");
  EXPECT_EQ(again.nics(), 2);
  EXPECT_DOUBLE_EQ(again.inter_node.latency_us, 8);
}

TEST(Cluster, ErrorsNameTheFileTheFieldAndTheValue) {
  json bad = two_nodes();
  bad["inter_node"]["bandwidth_GBps"] = -1;
  EXPECT_THAT(error_of(bad), HasSubstr("c.json: field 'inter_node.bandwidth_GBps' is -1"));
  bad = two_nodes();
  bad["nodes"] = 0;
  EXPECT_THAT(error_of(bad), HasSubstr("field 'nodes' is 0"));
  bad = two_nodes();
  bad["gpu_tflops"] = "fast";
  EXPECT_THAT(error_of(bad), HasSubstr("field 'gpu_tflops' is \"fast\""));
  bad = two_nodes();
  bad["intra_node"]["latency_ms"] = 1;
  EXPECT_THAT(error_of(bad), HasSubstr("unknown field 'intra_node.latency_ms'"));
  bad = two_nodes();
  bad["colour"] = "red";
  EXPECT_THAT(error_of(bad), HasSubstr("unknown field 'colour'"));
  bad = two_nodes();
  bad.erase("inter_node");
  EXPECT_THAT(error_of(bad), HasSubstr("missing field 'inter_node'"));
  bad = two_nodes();
  bad["inter_node"]["nics_per_node"] = 5;
  EXPECT_THAT(error_of(bad), HasSubstr("field 'inter_node.nics_per_node' is 5"));
  bad = two_nodes();
  bad["device_to_gpu"] = json::array({0, 3, 3});
  EXPECT_THAT(error_of(bad), HasSubstr("field 'device_to_gpu[2]' is 3: GPU already holds another device"));
  bad = two_nodes();
  bad["device_to_gpu"] = json::array({0, 8});
  EXPECT_THAT(error_of(bad), HasSubstr("field 'device_to_gpu[1]' is 8"));
  bad = two_nodes();
  bad["device_to_gpu"] = "round-robin";
  EXPECT_THAT(error_of(bad), HasSubstr("field 'device_to_gpu' is \"round-robin\""));
}

TEST(Cluster, ChecksThatTheProblemFits) {
  const ClusterSpec cluster = cluster_from_json(two_nodes(), "c.json");
  EXPECT_NO_THROW(cluster.validate("c.json", 8));
  try {
    cluster.validate("c.json", 9);
    FAIL() << "9 devices on 8 GPUs";
  } catch (const InputError& error) {
    EXPECT_THAT(error.what(), HasSubstr("p=9 devices but the cluster has 8 GPUs"));
  }
  json mapped = two_nodes();
  mapped["device_to_gpu"] = json::array({4, 0});
  EXPECT_THROW(cluster_from_json(mapped, "c.json").validate("c.json", 3), InputError);
}

TEST(Cluster, UnreadableOrMalformedFilesNameThePath) {
  try {
    load_cluster_file("/nonexistent/cluster.json");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_THAT(error.what(), HasSubstr("/nonexistent/cluster.json"));
  }
}

}  // namespace
}  // namespace zb
