// nvswitch_node (topology/builders/nvswitch_node.cpp).
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "topology/routing.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::config_error;
using testing::Json;

TEST(NvswitchNode, CountsAndFlags) {
  // g GPUs: nodes g + 1, cables g, diameter 2, bisection floor(g/2) x 450 (max flow).
  const Topology t = build(Json{{"builder", "nvswitch_node"}, {"nvlink_bandwidth", "450GBps"}, {"sharp", true}}, 8);
  const Summary s = summarize(t);
  EXPECT_EQ(s.nodes, 9u);
  EXPECT_EQ(s.cables, 8u);
  EXPECT_EQ(s.diameter, 2);
  EXPECT_NEAR(s.bisection.gbyte_per_second(), 4 * 450.0, 1e-6);
  EXPECT_FALSE(s.bisection_closed_form);
  EXPECT_TRUE(t.supports_in_network_reduction());
  EXPECT_EQ(t.link(0).latency, sim::Time::us(1));  // default nvlink_latency
  // Partial server: the first 4 GPUs.
  EXPECT_EQ(summarize(build(Json{{"builder", "nvswitch_node"}, {"nvlink_bandwidth", "450GBps"}}, 4)).cables, 4u);
}

TEST(NvswitchNode, Errors) {
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "nvswitch_node"}, {"nvlink_bandwidth", "450GBps"}}, 16);
            }),
            "cluster.network.gpus_per_node: 16 GPUs do not fit one nvswitch_node server of 8 GPUs (use at most 8 "
            "GPUs, or a multi-node builder (fat_tree, rail_optimized, rail_only, dragonfly_plus) with \"intra\": "
            "{\"builder\": \"nvswitch_node\", ...})");
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "nvswitch_node"}, {"nvlink_bandwidth", "0GBps"}}, 8);
            }),
            "cluster.network.nvlink_bandwidth: expected a positive bandwidth like \"400Gbps\" or \"50GBps\", got "
            "\"0GBps\"");
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "nvswitch_node"}, {"nvlink_bandwidth", 450}}, 8);
            }).rfind("cluster.network.nvlink_bandwidth: ", 0),
            0u);
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "nvswitch_node"}, {"nvlink_bandwidth", "450GBps"}, {"gpus_per_nod", 8}}, 8);
            }),
            "cluster.network.gpus_per_nod: unknown key in nvswitch_node (did you mean \"gpus_per_node\"?)");
}

}  // namespace
}  // namespace trainsim::topology
