// fat_tree (topology/builders/fat_tree.cpp).
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "topology/routing.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::config_error;
using testing::Json;

Json fat(int64_t radix, int64_t tiers, double oversubscription = 1.0) {
  return Json{
      {"builder", "fat_tree"}, {"gpus_per_node", 2}, {"nvlink_bandwidth", "100GBps"},       {"nic_bandwidth", "25GBps"},
      {"radix", radix},        {"tiers", tiers},     {"oversubscription", oversubscription}};
}

TEST(FatTree, TwoTiers) {
  // Radix 8, 1:1: leaves have 4 GPU ports (2 servers of 2) and 4 uplinks, one to each of 4
  // spines. 16 GPUs = 8 servers = 4 leaves. Nodes 16 + 8 + 4 + 4 = 32; cables 16 NVLink + 16 NIC
  // + 4 x 4; diameter GPU-leaf-spine-leaf-GPU = 4; bisection (1/2) 4 leaves x 4 x 25.
  const Topology t = build(fat(8, 2), 16);
  const Summary s = summarize(t);
  EXPECT_EQ(s.nodes, 32u);
  EXPECT_EQ(s.cables, 48u);
  EXPECT_EQ(s.diameter, 4);
  EXPECT_DOUBLE_EQ(s.bisection.gbyte_per_second(), 8 * 25.0);
  EXPECT_EQ(testing::links_between(t, NodeKind::kLeaf, NodeKind::kSpine), 16u);
  const Router r(t, RoutingParams{});
  EXPECT_DOUBLE_EQ(r.path_count(0, 8), 4.0);  // one path per spine
}

TEST(FatTree, OversubscriptionCutsTheBisection) {
  // Radix 8 at 3:1: 6 down, 2 up. 24 GPUs = 4 full leaves; bisection (1/2) x 4 x 2 x 25 =
  // (24 / 2) x 25 / 3.
  const Topology t = build(fat(8, 2, 3.0), 24);
  EXPECT_DOUBLE_EQ(t.bisection()->gbyte_per_second(), 100.0);
  EXPECT_EQ(summarize(t).nodes_by_kind.at("spine"), 2u);
  // At 1:1 the same GPUs fit 6 leaves: (24 / 2) x 25.
  EXPECT_DOUBLE_EQ(build(fat(8, 2), 24).bisection()->gbyte_per_second(), 300.0);
  // One leaf: no spines; the leaf is a crossbar.
  const Topology one = build(fat(8, 2), 4);
  EXPECT_EQ(summarize(one).nodes_by_kind.count("spine"), 0u);
  EXPECT_DOUBLE_EQ(one.bisection()->gbyte_per_second(), 50.0);
}

TEST(FatTree, ThreeTiers) {
  // Radix 8: pods of 4 leaves (16 GPUs) and 4 aggregation switches; 4 core groups of 4. 64 GPUs
  // = 4 pods: nodes 64 + 32 NVSwitches + 16 leaves + 16 aggregation + 16 core = 144; cables 64 +
  // 64 + 16 x 4 + 16 x 4 = 256; diameter 6; bisection (1/2) 16 x 4 x 25.
  const Topology t = build(fat(8, 3), 64);
  const Summary s = summarize(t);
  EXPECT_EQ(s.nodes, 144u);
  EXPECT_EQ(s.cables, 256u);
  EXPECT_EQ(s.nodes_by_kind.at("core"), 16u);
  EXPECT_EQ(s.diameter, 6);
  EXPECT_DOUBLE_EQ(s.bisection.gbyte_per_second(), 800.0);
  const Router r(t, RoutingParams{});
  EXPECT_EQ(r.hops(0, 63), 6);
  EXPECT_DOUBLE_EQ(r.path_count(0, 63), 16.0);  // 4 aggregation switches x 4 cores
}

TEST(FatTree, ShapeErrorsNameTheField) {
  EXPECT_EQ(config_error([] { build(fat(8, 2), 64); }),
            "cluster.network.tiers: 64 GPUs do not fit a 2-tier fat tree of radix-8 switches (at most 32 GPUs) (use "
            "\"tiers\": 3 or a larger radix)");
  EXPECT_EQ(config_error([] { build(fat(8, 3), 256); }),
            "cluster.network.radix: 256 GPUs do not fit a 3-tier fat tree of radix-8 switches (at most 128 GPUs) (use "
            "a larger radix)");
  Json big = fat(8, 2);
  big["gpus_per_node"] = 8;
  EXPECT_EQ(config_error([&] { build(big, 16); }),
            "cluster.network.radix: a leaf of 8 ports at 1:1 has 4 GPU ports, fewer than one 8-GPU server (use a "
            "larger radix)");
  EXPECT_EQ(config_error([] { build(fat(8, 2), 7); }),
            "cluster.network.gpus_per_node: 7 GPUs are not a whole number of 2-GPU servers (use a multiple of 2 GPUs)");
  EXPECT_EQ(config_error([] {
              build(Json{{"builder", "fat_tree"}, {"nvlink_bandwidth", "450GBps"}, {"nic_bandwidth", "0Gbps"}}, 16);
            }),
            "cluster.network.nic_bandwidth: expected a positive bandwidth like \"400Gbps\" or \"50GBps\", got "
            "\"0Gbps\"");
}

}  // namespace
}  // namespace trainsim::topology
