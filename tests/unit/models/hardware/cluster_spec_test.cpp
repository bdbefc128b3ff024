#include "models/hardware/cluster_spec.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"

namespace trainsim::models::hardware {
namespace {

using sim::config::Json;

TEST(ClusterSpec, PresetFields) {
  const ClusterSpec c = testing::cluster("dgx-h100");
  EXPECT_EQ(c.gpu, "h100-sxm-80gb");
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_EQ(c.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(c.nvlink_bandwidth.bytes_per_second(), 450e9);
  EXPECT_DOUBLE_EQ(c.nic_bandwidth.bytes_per_second(), 400e9 / 8);  // 400 Gb/s in bytes
  EXPECT_EQ(c.nic_latency, sim::Time::us(5));
  EXPECT_TRUE(c.network.is_null());
}

TEST(ClusterSpec, InlineGpuObject) {
  Json j = testing::ideal_cluster();
  j["gpu"] = Json{{"name", "x"}};
  const ClusterSpec c = parse_cluster(j, "cluster");
  EXPECT_EQ(c.gpu, "inline");
  EXPECT_EQ(c.gpu_inline.at("name"), "x");
  j["gpu"] = 3;
  EXPECT_EQ(testing::config_error([&] { parse_cluster(j, "cluster"); }),
            "cluster.gpu: expected a GPU preset name or a GPU object, got an integer");
}

TEST(ClusterSpec, DerivedNetworkIsRailOptimized) {
  // vtrain-a100: 4 NICs of 200 Gb/s x 0.96 for 8 GPUs: each GPU owns half a NIC = 12 GB/s;
  // NVLink 300 GB/s x 0.78 = 234 GB/s; per-step latencies are split over the two hops of a step.
  const ClusterSpec c = testing::cluster("vtrain-a100");
  const Json n = network_spec(c);
  EXPECT_EQ(n.at("builder"), "rail_optimized");
  EXPECT_EQ(n.at("gpus_per_node"), 8);
  EXPECT_EQ(n.at("nic_bandwidth"), "12GBps");
  EXPECT_EQ(n.at("nvlink_bandwidth"), "234GBps");
  EXPECT_EQ(n.at("nvlink_latency"), "950ns");
  EXPECT_EQ(n.at("link_latency"), "2500ns");
  // An explicit network object is returned as given.
  Json j = testing::ideal_cluster();
  j["network"] = Json{{"builder", "fat_tree"}};
  EXPECT_EQ(network_spec(parse_cluster(j, "cluster")), (Json{{"builder", "fat_tree"}}));
  j["network"] = "fat_tree";
  EXPECT_EQ(testing::config_error([&] { parse_cluster(j, "cluster"); }),
            "cluster.network: expected an object {\"builder\": NAME, ...} or null");
}

TEST(ClusterSpec, RequiredKeysAndRanges) {
  Json j = testing::ideal_cluster();
  j.erase("nic_bandwidth");
  EXPECT_EQ(testing::config_error([&] {
              parse_cluster(j, "cluster");
            }).rfind("cluster.nic_bandwidth: missing required key", 0),
            0u);
  j = testing::ideal_cluster();
  j["gpus_per_node"] = 0;
  EXPECT_EQ(testing::config_error([&] { parse_cluster(j, "cluster"); }),
            "cluster.gpus_per_node: must be between 1 and 1024, got 0");
  j = testing::ideal_cluster();
  j["nic_bandwidth"] = "400";
  EXPECT_EQ(testing::config_error([&] { parse_cluster(j, "cluster"); }).rfind("cluster.nic_bandwidth: ", 0), 0u);
}

}  // namespace
}  // namespace trainsim::models::hardware
