// The builder registry (topology/builder.cpp): every builder registered, documented, found by name.
#include "topology/builder.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace trainsim::topology {
namespace {

using testing::config_error;
using testing::Json;

TEST(BuilderRegistry, ListsEveryBuilder) {
  EXPECT_EQ(BuilderRegistry::instance().names(),
            (std::vector<std::string>{"dgx1_cube_mesh", "dragonfly_plus", "explicit", "fat_tree", "nvswitch_node",
                                      "p2p_full_mesh", "pcie_tree", "rail_only", "rail_optimized", "torus"}));
  EXPECT_EQ(node_builder_names(),
            (std::vector<std::string>{"dgx1_cube_mesh", "nvswitch_node", "p2p_full_mesh", "pcie_tree"}));
}

TEST(BuilderRegistry, EveryBuilderIsDocumented) {
  for (const BuilderInfo& b : BuilderRegistry::instance().all()) {
    SCOPED_TRACE(b.name);
    EXPECT_FALSE(b.description.empty());
    const auto params = b.params();
    EXPECT_FALSE(params.empty());
    for (const ParamDoc& p : params) {
      EXPECT_FALSE(p.key.empty());
      EXPECT_FALSE(p.type.empty());
      EXPECT_FALSE(p.doc.empty());
    }
    const std::string md = b.markdown();
    EXPECT_EQ(md.rfind("### " + b.name + "\n", 0), 0u);
    EXPECT_NE(md.find("| `" + params.front().key + "` |"), std::string::npos);
  }
}

TEST(BuilderRegistry, UnknownNamesListTheValidOnes) {
  EXPECT_EQ(config_error([] {
              testing::build(Json{{"builder", "fat-tree"}}, 8);
            }),
            "cluster.network.builder: unknown topology builder \"fat-tree\" (did you mean \"fat_tree\"? valid: "
            "dgx1_cube_mesh, dragonfly_plus, explicit, fat_tree, nvswitch_node, p2p_full_mesh, pcie_tree, rail_only, "
            "rail_optimized, torus)");
  EXPECT_EQ(config_error([] { get_node_builder("fat_tree", "x.intra.builder"); }),
            "x.intra.builder: \"fat_tree\" is not a node builder (it builds a whole cluster) (valid: dgx1_cube_mesh, "
            "nvswitch_node, p2p_full_mesh, pcie_tree)");
  EXPECT_EQ(config_error([] { get_node_builder("nvswich_node", "x"); }),
            "x: unknown node builder \"nvswich_node\" (did you mean \"nvswitch_node\"? valid: dgx1_cube_mesh, "
            "nvswitch_node, p2p_full_mesh, pcie_tree)");
}

TEST(BuilderRegistry, NodeBuildersBuildOneServer) {
  const BuilderInfo& b = BuilderRegistry::instance().get("p2p_full_mesh", "x");
  ASSERT_TRUE(b.is_node_builder());
  const Topology t = b.build(Json{{"link_bandwidth", "64GBps"}, {"gpus_per_node", 4}}, 3, "n");
  EXPECT_EQ(t.gpu_count(), 3u);    // a partial server: its first 3 GPUs
  EXPECT_EQ(t.cable_count(), 3u);  // 3 x 2 / 2
  EXPECT_EQ(t.gpus_per_server(), 4);
  EXPECT_EQ(config_error([&] {
              b.build(Json{{"link_bandwidth", "64GBps"}, {"gpus_per_node", 4}}, 5, "n");
            }),
            "n.gpus_per_node: 5 GPUs do not fit one p2p_full_mesh server of 4 GPUs (use at most 4 GPUs, or a "
            "multi-node builder (fat_tree, rail_optimized, rail_only, dragonfly_plus) with \"intra\": {\"builder\": "
            "\"p2p_full_mesh\", ...})");
}

}  // namespace
}  // namespace trainsim::topology
