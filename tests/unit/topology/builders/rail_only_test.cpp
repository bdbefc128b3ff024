// rail_only (topology/builders/rail_only.cpp).
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "topology/routing.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::Json;

TEST(RailOnly, CountsAndCrossRailRoutesUseNvlink) {
  // 4 servers of 8: nodes 32 + 4 NVSwitches + 8 rails; cables 32 NVLink + 32 NIC; no spine.
  const Topology t =
      build(Json{{"builder", "rail_only"}, {"nvlink_bandwidth", "450GBps"}, {"nic_bandwidth", "50GBps"}}, 32);
  const Summary s = summarize(t);
  EXPECT_EQ(s.nodes, 44u);
  EXPECT_EQ(s.cables, 64u);
  EXPECT_EQ(s.nodes_by_kind.count("spine"), 0u);
  EXPECT_EQ(s.diameter, 4);  // GPU - NVSwitch - GPU - rail - GPU
  EXPECT_DOUBLE_EQ(s.bisection.gbyte_per_second(), 16 * 50.0);
  RoutingParams p;
  p.mode = RoutingParams::Mode::kSpray;
  p.pxn = false;
  const Router r(t, p);
  // GPU 0 (server 0, rail 0) to GPU 9 (server 1, rail 1): NVLink to GPU 1 then rail 1, or rail 0
  // to GPU 8 then NVLink: both cross NVLink inside a server.
  const auto routes = r.routes(0, 9, 0);
  ASSERT_EQ(routes.size(), 2u);
  for (const Route& route : routes) {
    EXPECT_EQ(route.links.size(), 4u);
    size_t nvlink = 0, ib = 0;
    for (const LinkId l : route.links) {
      nvlink += t.link(l).kind == "nvlink";
      ib += t.link(l).kind == "ib";
    }
    EXPECT_EQ(nvlink, 2u);
    EXPECT_EQ(ib, 2u);
  }
  // Same rail: the rail switch alone.
  const auto same_rail = r.routes(0, 8, 0);
  for (const LinkId l : same_rail[0].links) EXPECT_EQ(t.link(l).kind, "ib");
  // With PXN (the default), NCCL's choice only: NVLink to GPU 1 first, then rail 1.
  p.pxn = true;
  const Router pxn(t, p);
  const auto one = pxn.routes(0, 9, 0);
  ASSERT_EQ(one.size(), 1u);
  ASSERT_EQ(one[0].links.size(), 4u);
  EXPECT_EQ(t.link(one[0].links[0]).kind, "nvlink");
  EXPECT_EQ(t.link(one[0].links[1]).kind, "nvlink");
  EXPECT_EQ(t.node(t.link_dst(one[0].links[1])).name, "gpu1");
  EXPECT_EQ(t.link(one[0].links[3]).kind, "ib");
}

}  // namespace
}  // namespace trainsim::topology
