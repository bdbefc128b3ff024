// rail_optimized (topology/builders/rail_optimized.cpp).
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "topology/routing.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::config_error;
using testing::Json;

Json rail(double oversubscription = 1.0) {
  return Json{{"builder", "rail_optimized"},         {"gpus_per_node", 8},    {"nvlink_bandwidth", "450GBps"},
              {"nic_bandwidth", "50GBps"},           {"servers_per_unit", 4}, {"spines", 2},
              {"oversubscription", oversubscription}};
}

// Rail leaf of GPU g with 8-GPU servers and 4-server units: leaf 8 x unit + rail.
std::string rail_leaf_of(size_t g) { return "rail_leaf" + std::to_string(g / 32 * 8 + g % 8); }

TEST(RailOptimized, Counts) {
  // 64 GPUs = 8 servers = 2 units of 4: leaves 2 x 8; nodes 64 + 8 + 16 + 2; cables 64 NVLink +
  // 64 NIC + 16 x 2; each leaf-spine cable carries 4 x 50 / 2 spines = 100 GB/s.
  const Topology t = build(rail(), 64);
  const Summary s = summarize(t);
  EXPECT_EQ(s.nodes, 90u);
  EXPECT_EQ(s.cables, 160u);
  EXPECT_EQ(s.diameter, 4);
  EXPECT_DOUBLE_EQ(s.bisection.gbyte_per_second(), 32 * 50.0);
  for (LinkId id = 0; id < t.link_count(); ++id) {
    if (t.node(t.link_src(id)).kind == NodeKind::kLeaf && t.node(t.link_dst(id)).kind == NodeKind::kSpine) {
      EXPECT_DOUBLE_EQ(t.link(id).capacity.gbyte_per_second(), 100.0);
    }
  }
  // GPU i of every server of a unit is on rail leaf i of the unit.
  for (size_t g = 0; g < 64; ++g) {
    const auto out = boost::out_edges(t.gpu_node(g), t.graph());
    bool on_rail = false;
    for (const Edge e : boost::make_iterator_range(out))
      on_rail = on_rail || t.node(boost::target(e, t.graph())).name == rail_leaf_of(g);
    EXPECT_TRUE(on_rail) << g;
  }
}

TEST(RailOptimized, Oversubscription) {
  // 2:1: each leaf's uplink halves: (64 / 2) x 50 / 2.
  EXPECT_DOUBLE_EQ(build(rail(2.0), 64).bisection()->gbyte_per_second(), 800.0);
  // One unit: halves of servers talk over the rail leaves, whatever the uplinks: (32 / 2) x 50.
  EXPECT_DOUBLE_EQ(build(rail(2.0), 32).bisection()->gbyte_per_second(), 800.0);
  // One server: no closed form, no spines.
  const Topology one = build(rail(), 8);
  EXPECT_FALSE(one.bisection().has_value());
  EXPECT_EQ(summarize(one).nodes_by_kind.count("spine"), 0u);
}

TEST(RailOptimized, WholeServersOnly) {
  EXPECT_EQ(config_error([] { build(rail(), 12); }),
            "cluster.network.gpus_per_node: 12 GPUs are not a whole number of 8-GPU servers (use a multiple of 8 "
            "GPUs)");
}

}  // namespace
}  // namespace trainsim::topology
