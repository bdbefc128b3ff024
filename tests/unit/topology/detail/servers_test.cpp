// Server fabrics of multi-node builders (topology/detail/servers.cpp): "intra" or the
// nvswitch_node shorthand.
#include "topology/detail/servers.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace trainsim::topology::detail {
namespace {

using testing::build;
using testing::config_error;
using testing::Json;

TEST(Servers, ShorthandIsAnNvswitchServer) {
  const Topology t = build(Json{{"builder", "rail_only"},
                                {"gpus_per_node", 4},
                                {"nvlink_bandwidth", "450GBps"},
                                {"nic_bandwidth", "50GBps"},
                                {"sharp", true}},
                           8);
  EXPECT_EQ(t.gpus_per_server(), 4);
  EXPECT_EQ(t.server_of(5), 1);
  EXPECT_EQ(t.node(t.gpu_node(5)).local, 1);
  EXPECT_EQ(testing::links_between(t, NodeKind::kGpu, NodeKind::kNvSwitch), 8u);
  EXPECT_TRUE(t.supports_in_network_reduction());  // NVLS from the server fabric
}

TEST(Servers, IntraNamesANodeBuilder) {
  const Json j{{"builder", "rail_only"},
               {"nic_bandwidth", "25GBps"},
               {"intra", Json{{"builder", "pcie_tree"}, {"pcie_bandwidth", "25GBps"}}}};
  const Topology t = build(j, 16);  // 2 PCIe servers of 2 x 2 x 2 GPUs
  EXPECT_EQ(t.gpus_per_server(), 8);
  EXPECT_EQ(testing::links_between(t, NodeKind::kGpu, NodeKind::kPcieSwitch), 16u);
  EXPECT_EQ(testing::links_between(t, NodeKind::kCpu, NodeKind::kCpu), 2u * 2u);  // 1 cable per server
  EXPECT_FALSE(t.supports_in_network_reduction());
  EXPECT_EQ(config_error([&] { build(j, 12); }),
            "cluster.network.intra.gpus_per_switch: 12 GPUs are not a whole number of 8-GPU servers (use a multiple "
            "of 8 GPUs)");
}

TEST(Servers, ErrorsNameTheField) {
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "rail_only"}, {"nic_bandwidth", "25GBps"}}, 16);
            }),
            "cluster.network.nvlink_bandwidth: missing required key (add \"nvlink_bandwidth\": bandwidth)");
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "rail_only"},
                         {"nic_bandwidth", "25GBps"},
                         {"nvlink_bandwidth", "450GBps"},
                         {"intra", Json{{"builder", "dgx1_cube_mesh"}}}},
                    16);
            }),
            "cluster.network.nvlink_bandwidth: cannot be combined with \"intra\" (move it into the \"intra\" object, "
            "or drop \"intra\")");
  EXPECT_EQ(
      config_error([] {
        build(Json{{"builder", "rail_only"}, {"nic_bandwidth", "25GBps"}, {"intra", Json{{"builder", "torus"}}}}, 16);
      }),
      "cluster.network.intra.builder: \"torus\" is not a node builder (it builds a whole cluster) (valid: "
      "dgx1_cube_mesh, nvswitch_node, p2p_full_mesh, pcie_tree)");
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "rail_only"}, {"nic_bandwidth", "25GBps"}, {"intra", Json{{"gpus", 8}}}}, 16);
            }),
            "cluster.network.intra.builder: missing required key (name a node builder: dgx1_cube_mesh, "
            "nvswitch_node, p2p_full_mesh, pcie_tree)");
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "rail_only"}, {"nic_bandwidth", "25GBps"}, {"intra", "dgx1"}}, 16);
            }),
            "cluster.network.intra: expected an object {\"builder\": NODE_BUILDER, ...} or null, got a string");
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "rail_only"},
                         {"nic_bandwidth", "25GBps"},
                         {"intra", Json{{"builder", "dgx1_cube_mesh"}, {"nvlink_gen", 3}}}},
                    16);
            }).rfind("cluster.network.intra.nvlink_gen: ", 0),
            0u);
  EXPECT_EQ(numbered("leaf", 3), "leaf3");
  EXPECT_EQ(numbered("agg", 3, 12), "agg3_12");
}

}  // namespace
}  // namespace trainsim::topology::detail
