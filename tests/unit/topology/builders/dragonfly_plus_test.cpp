// dragonfly_plus (topology/builders/dragonfly_plus.cpp).
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "topology/routing.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::config_error;
using testing::Json;

Json dragonfly(int64_t radix, int64_t gpus_per_node = 2) {
  return Json{{"builder", "dragonfly_plus"},
              {"gpus_per_node", gpus_per_node},
              {"nvlink_bandwidth", "100GBps"},
              {"nic_bandwidth", "25GBps"},
              {"radix", radix}};
}

TEST(DragonflyPlus, ThreeGroups) {
  // Radix 8: groups of 4 leaves (2 servers of 2 GPUs each) and 4 spines; 48 GPUs = 3 groups.
  // h = 16 global ports per group, m = 16 / 2 = 8 cables per pair, dealt round-robin to the 4
  // spines: 4 merged cables of 2 per pair, 12 in all. Nodes 48 + 24 + 12 + 12 = 96; cables 48 +
  // 48 + 12 x 4 + 12 = 156; diameter GPU-leaf-spine-spine-leaf-GPU = 5; bisection
  // min(24 x 25, 1 x 2 x 8 x 25) = 400.
  const Topology t = build(dragonfly(8), 48);
  const Summary s = summarize(t);
  EXPECT_EQ(s.nodes, 96u);
  EXPECT_EQ(s.cables, 156u);
  EXPECT_EQ(s.diameter, 5);
  EXPECT_DOUBLE_EQ(s.bisection.gbyte_per_second(), 400.0);
  size_t global = 0;
  for (LinkId id = 0; id < t.link_count(); id += 2)
    if (t.link(id).kind == "ib_global") {
      ++global;
      EXPECT_DOUBLE_EQ(t.link(id).capacity.gbyte_per_second(), 50.0);
    }
  EXPECT_EQ(global, 12u);
  const Router r(t, RoutingParams{});
  // Across groups: leaf, any of the 4 spines holding a cable to the other group, that cable.
  EXPECT_EQ(r.hops(0, 47), 5);
  EXPECT_DOUBLE_EQ(r.path_count(0, 47), 4.0);
  EXPECT_EQ(r.hops(0, 15), 4);  // same group, other leaf: leaf - spine - leaf
}

TEST(DragonflyPlus, TooManyGroups) {
  // Radix 4 with 1-GPU servers: 2 leaves of 2 GPUs per group, at most (2 x 2) + 1 = 5 groups.
  EXPECT_EQ(summarize(build(dragonfly(4, 1), 20)).gpus, 20u);
  EXPECT_EQ(config_error([] { build(dragonfly(4, 1), 24); }),
            "cluster.network.radix: 24 GPUs need 6 groups, but radix-4 switches join at most 5 (use a larger radix)");
  EXPECT_EQ(config_error([] { build(dragonfly(4, 4), 8); }),
            "cluster.network.radix: a leaf of radix 4 has 2 GPU ports, fewer than one 4-GPU server (use a larger "
            "radix)");
}

}  // namespace
}  // namespace trainsim::topology
