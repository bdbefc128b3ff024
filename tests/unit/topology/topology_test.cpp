// Topology builders, routing and summary (topology/*.cpp), with the closed forms in comments.
#include <gtest/gtest.h>

#include <set>

#include "sim/error.hpp"
#include "topology/builder.hpp"
#include "topology/routing.hpp"
#include "topology/summary.hpp"

namespace trainsim::topology {
namespace {

using sim::config::Json;

Json rail(int64_t servers_per_unit = 4, int64_t spines = 2) {
  return Json{{"builder", "rail_optimized"},          {"gpus_per_node", 8},
              {"nvlink_bandwidth", "450GBps"},        {"nic_bandwidth", "50GBps"},
              {"servers_per_unit", servers_per_unit}, {"spines", spines}};
}

TEST(Builders, RegistryListsEveryBuilder) {
  std::vector<std::string> names;
  for (const auto& b : BuilderRegistry::instance().all()) names.push_back(b.name);
  EXPECT_EQ(names, (std::vector<std::string>{"fat_tree", "nvswitch_node", "rail_optimized"}));
  try {
    build_topology(Json{{"builder", "fat-tree"}}, 8, "cluster.network");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "cluster.network.builder: unknown topology builder \"fat-tree\" (did you mean \"fat_tree\"? valid: fat_tree, "
        "nvswitch_node, rail_optimized)");
  }
}

TEST(Builders, RailOptimizedCounts) {
  // 64 GPUs = 8 servers = 2 units of 4: nodes = 64 GPUs + 8 NVSwitches + 2 x 8 rail leaves + 2
  // spines; cables = 64 NVLink + 64 NIC + 16 leaves x 2 spines.
  const Topology t = build_topology(rail(), 64, "n");
  const Summary s = summarize(t);
  EXPECT_EQ(s.gpus, 64u);
  EXPECT_EQ(s.nodes, 64u + 8u + 16u + 2u);
  EXPECT_EQ(s.cables, 64u + 64u + 32u);
  EXPECT_EQ(s.diameter, 4);  // GPU - leaf - spine - leaf - GPU
  EXPECT_DOUBLE_EQ(s.bisection.gbyte_per_second(), 32 * 50.0);
}

TEST(Builders, FatTreeOversubscriptionHalvesBisection) {
  Json j{{"builder", "fat_tree"}, {"nvlink_bandwidth", "300GBps"}, {"nic_bandwidth", "25GBps"}, {"servers_per_leaf", 2},
         {"spines", 4},           {"oversubscription", 2.0}};
  const Topology t = build_topology(j, 64, "n");
  EXPECT_DOUBLE_EQ(t.bisection().gbyte_per_second(), 32 * 25.0 / 2);
  // Each leaf has 16 NIC ports at 25 GB/s = 400 GB/s down and 200 GB/s up over 4 spine cables.
  bool found = false;
  for (LinkId id = 0; id < t.link_count(); ++id)
    if (t.graph()[t.link_source(id)].kind == NodeKind::kLeaf && t.graph()[t.link_target(id)].kind == NodeKind::kSpine) {
      EXPECT_DOUBLE_EQ(t.link(id).capacity.gbyte_per_second(), 50.0);
      found = true;
    }
  EXPECT_TRUE(found);
}

TEST(Builders, ShapeErrorsNameTheField) {
  try {
    build_topology(rail(), 12, "cluster.network");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "cluster.network.gpus_per_node: 12 GPUs are not a whole number of 8-GPU servers (use a multiple of 8 GPUs)");
  }
  Json node{{"builder", "nvswitch_node"}, {"nvlink_bandwidth", "450GBps"}};
  EXPECT_THROW(build_topology(node, 16, "n"), ConfigError);
  node["nvlink_bandwidth"] = "0GBps";
  EXPECT_THROW(build_topology(node, 8, "n"), ConfigError);  // zero bandwidth
  node["nvlink_bandwidth"] = "450GBps";
  node["gpus_per_nod"] = 8;
  EXPECT_THROW(build_topology(node, 8, "n"), ConfigError);  // closed schema
}

TEST(Routing, SameRailStaysUnderOneLeafAndCrossRailTakesFourHops) {
  const Topology t = build_topology(rail(), 64, "n");
  const Router r(t, RoutingParams{});
  EXPECT_EQ(r.hops(0, 8), 2);   // GPU 0 of servers 0 and 1: same rail leaf
  EXPECT_EQ(r.hops(0, 1), 2);   // same server: over the NVSwitch
  EXPECT_EQ(r.hops(0, 9), 4);   // other server, other rail: NVLink then rail, or through a spine
  EXPECT_EQ(r.hops(0, 40), 4);  // other scalable unit, same rail: leaf - spine - leaf
  for (const Route& route : r.routes(0, 9, 7)) {
    EXPECT_EQ(route.links.size(), 4u);
    EXPECT_EQ(t.link_source(route.links.front()), t.gpu(0));
    EXPECT_EQ(t.link_target(route.links.back()), t.gpu(9));
    for (size_t k = 1; k < route.links.size(); ++k)
      EXPECT_EQ(t.link_target(route.links[k - 1]), t.link_source(route.links[k]));
  }
}

TEST(Routing, EcmpIsDeterministicAndSpreadsSubFlows) {
  const Topology t = build_topology(rail(4, 8), 64, "n");
  RoutingParams p;
  p.flows_per_connection = 16;
  p.seed = 42;
  const Router r(t, p), again(t, p);
  const auto a = r.routes(0, 40, 1), b = again.routes(0, 40, 1);
  ASSERT_EQ(a.size(), 16u);
  std::set<LinkId> spines_used;
  double total = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].links, b[i].links);
    spines_used.insert(a[i].links[1]);  // leaf -> spine choice
    total += a[i].fraction;
  }
  EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_GE(spines_used.size(), 4u);  // 16 hashed sub-flows over 8 spines use several
}

TEST(Routing, SprayCoversEveryEqualCostPath) {
  const Topology t = build_topology(rail(4, 4), 64, "n");
  const Router r(t, RoutingParams{RoutingParams::Mode::kSpray, 1, 0});
  const auto routes = r.routes(0, 40, 0);  // same rail, different units: one path per spine
  ASSERT_EQ(routes.size(), 4u);
  for (const Route& route : routes) EXPECT_DOUBLE_EQ(route.fraction, 0.25);
}

TEST(Routing, FailedLinksAreRoutedAround) {
  Topology t = build_topology(rail(4, 2), 64, "n");
  // Fail GPU 0's NIC cable in both directions: GPU 0 now reaches server 1's GPU 0 through its
  // NVSwitch, GPU 1, rail leaf 1, GPU 9 and server 1's NVSwitch.
  for (LinkId id = 0; id < t.link_count(); ++id)
    if ((t.link_source(id) == t.gpu(0) || t.link_target(id) == t.gpu(0)) && t.link(id).kind == "ib") t.degrade(id, 0.0);
  const Router r(t, RoutingParams{});
  EXPECT_EQ(r.hops(0, 8), 6);  // was 2
  EXPECT_NO_THROW(t.check_connected("n"));
  // Fail its NVLink too: GPU 0 is cut off.
  for (LinkId id = 0; id < t.link_count(); ++id)
    if (t.link_source(id) == t.gpu(0) || t.link_target(id) == t.gpu(0)) t.degrade(id, 0.0);
  try {
    t.check_connected("cluster.network");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cluster.network: the topology is disconnected: GPU 1 cannot reach GPU 0 (check the links of the network "
              "description)");
  }
}

TEST(Summary, SixteenThousandGpusBuildAndRouteQuickly) {
  // Scale check (speed itself is measured by benchmarks, not asserted here).
  Json j = rail(32, 16);
  const Topology t = build_topology(j, 16384, "n");
  EXPECT_EQ(summarize(t).diameter, 4);
  const Router r(t, RoutingParams{});
  for (size_t i = 0; i < 200; ++i) EXPECT_FALSE(r.routes(i * 81, 16383 - i * 7, i).empty());
}

}  // namespace
}  // namespace trainsim::topology
