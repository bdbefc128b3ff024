// p2p_full_mesh (topology/builders/p2p_full_mesh.cpp).
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "topology/routing.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::Json;

TEST(P2pFullMesh, CountsDiameterBisection) {
  // MI300X: 8 GPUs, 28 pairs of 64 GB/s; diameter 1; bisection 4 x 4 x 64.
  const Topology t = build(Json{{"builder", "p2p_full_mesh"}, {"link_bandwidth", "64GBps"}}, 8);
  const Summary s = summarize(t);
  EXPECT_EQ(s.nodes, 8u);
  EXPECT_EQ(s.cables, 28u);
  EXPECT_EQ(s.diameter, 1);
  EXPECT_NEAR(s.bisection.gbyte_per_second(), 16 * 64.0, 1e-6);
  EXPECT_EQ(t.link(0).kind, "xgmi");
  const Router r(t, RoutingParams{});
  EXPECT_DOUBLE_EQ(r.path_count(2, 6), 1.0);  // the direct link only
}

TEST(P2pFullMesh, InsideAFabric) {
  // Gaudi-style servers on rails: 2 servers of 8.
  const Json j{{"builder", "rail_only"},
               {"nic_bandwidth", "12.5GBps"},
               {"intra", Json{{"builder", "p2p_full_mesh"}, {"link_bandwidth", "37.5GBps"}, {"link_kind", "roce"}}}};
  const Topology t = build(j, 16);
  EXPECT_EQ(summarize(t).cables, 2 * 28u + 16u);
  EXPECT_EQ(Router(t, RoutingParams{}).hops(0, 9), 3);  // GPU 0 - GPU 1 - rail 1 - GPU 9
}

}  // namespace
}  // namespace trainsim::topology
