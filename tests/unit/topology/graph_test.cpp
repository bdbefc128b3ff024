// Topology (topology/graph.cpp): duplex cables as two directed links, degradation, connectivity.
#include "topology/graph.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "test_support.hpp"

namespace trainsim::topology {
namespace {

using testing::config_error;

Topology line() {  // gpu0 - sw - gpu1
  Topology t;
  const Vertex a = t.add_node(NodeKind::kGpu, "gpu0", 0, 0);
  const Vertex s = t.add_node(NodeKind::kNvSwitch, "sw", 0, 0);
  const Vertex b = t.add_node(NodeKind::kGpu, "gpu1", 0, 1);
  t.add_cable(a, s, sim::Bandwidth::gbyte_per_s(100), sim::Time::us(1), "nvlink");
  t.add_cable(s, b, sim::Bandwidth::gbyte_per_s(50), sim::Time::us(2), "nvlink");
  return t;
}

TEST(Graph, CopiesAndMovesKeepLinkPropertiesOfTheirOwnGraph) {
  // Regression: Boost's adjacency_list copies on move, so link descriptors kept from the source
  // pointed into a destroyed graph (a simulate on the derived fabric read garbage capacities).
  auto moved = std::make_unique<Topology>(line());
  Topology copy = *moved;
  copy.degrade(2, 0.5);  // the copy's own links: the original is untouched
  EXPECT_EQ(moved->capacity(2), sim::Bandwidth::gbyte_per_s(50));
  moved.reset();
  for (LinkId l = 0; l < copy.link_count(); ++l) {
    EXPECT_EQ(copy.link(l).id, l);
    EXPECT_EQ(copy.link(l).latency, l < 2 ? sim::Time::us(1) : sim::Time::us(2));
  }
  EXPECT_EQ(copy.capacity(2), sim::Bandwidth::gbyte_per_s(25));
  Topology assigned;
  assigned = std::move(copy);
  EXPECT_EQ(assigned.capacity(2), sim::Bandwidth::gbyte_per_s(25));
  EXPECT_EQ(assigned.link_src(0), assigned.gpu_node(0));
}

TEST(Graph, CablesAreTwoDirectedLinksWithConsecutiveIds) {
  const Topology t = line();
  EXPECT_EQ(t.node_count(), 3u);
  EXPECT_EQ(t.gpu_count(), 2u);
  EXPECT_EQ(t.link_count(), 4u);
  EXPECT_EQ(t.cable_count(), 2u);
  // Cable 1 is links 2 (sw -> gpu1) and 3 (gpu1 -> sw).
  EXPECT_EQ(t.link_src(2), t.link_dst(3));
  EXPECT_EQ(t.link_dst(2), t.gpu_node(1));
  EXPECT_EQ(Topology::reverse(2), 3u);
  EXPECT_EQ(Topology::reverse(3), 2u);
  EXPECT_EQ(t.link(3).id, 3u);
  EXPECT_DOUBLE_EQ(t.link(3).capacity.gbyte_per_second(), 50.0);
  EXPECT_EQ(t.link(3).latency, sim::Time::us(2));
  EXPECT_EQ(t.link(3).kind, "nvlink");
  EXPECT_EQ(t.server_of(1), 0);
  EXPECT_EQ(t.node(t.gpu_node(1)).local, 1);
  EXPECT_EQ(*t.find_node("sw"), 1u);
  EXPECT_FALSE(t.find_node("nope").has_value());
}

TEST(Graph, DegradationScalesOneDirection) {
  Topology t = line();
  t.degrade(0, 0.25);
  EXPECT_DOUBLE_EQ(t.capacity(0).gbyte_per_second(), 25.0);
  EXPECT_DOUBLE_EQ(t.capacity(1).gbyte_per_second(), 100.0);  // the other direction is untouched
  EXPECT_DOUBLE_EQ(t.link(0).capacity.gbyte_per_second(), 100.0);
  t.degrade(0, 1.0);
  EXPECT_DOUBLE_EQ(t.capacity(0).gbyte_per_second(), 100.0);
}

TEST(Graph, ConnectivityIsCheckedInBothDirections) {
  Topology t = line();
  EXPECT_NO_THROW(t.check_connected("n"));
  t.degrade(2, 0.0);  // sw -> gpu1 fails: GPU 0 cannot reach GPU 1, though GPU 1 still reaches GPU 0
  EXPECT_EQ(config_error([&] { t.check_connected("cluster.network"); }),
            "cluster.network: the topology is disconnected: GPU 0 (\"gpu0\") cannot reach GPU 1 (\"gpu1\") (check the "
            "links of the network description and its faults)");
  t.degrade(2, 1.0);
  t.degrade(3, 0.0);
  EXPECT_EQ(config_error([&] { t.check_connected("cluster.network"); }),
            "cluster.network: the topology is disconnected: GPU 1 (\"gpu1\") cannot reach GPU 0 (\"gpu0\") (check the "
            "links of the network description and its faults)");
}

TEST(Graph, DisconnectedGpuNamesTheFirstCutOffOne) {
  Topology t = line();
  EXPECT_FALSE(t.disconnected_gpu(2).has_value());
  t.degrade(2, 0.0);  // sw -> gpu1 fails
  EXPECT_EQ(t.disconnected_gpu(2), std::optional<size_t>(1));
  EXPECT_FALSE(t.disconnected_gpu(1).has_value());  // a one-GPU job is never cut
}

TEST(Graph, NodeNamedSuggestsTheNearestName) {
  const Topology t = line();
  EXPECT_EQ(t.node(node_named(t, "gpu1", "x")).name, "gpu1");
  EXPECT_EQ(config_error([&] { node_named(t, "gpu7", "--fault"); }),
            "--fault: no node named \"gpu7\" (did you mean \"gpu0\"?)");
}

TEST(Graph, NodeKindNamesRoundTrip) {
  const auto names = node_kind_names();
  ASSERT_EQ(names.size(), 9u);
  for (const auto& n : names) EXPECT_EQ(to_string(*parse_node_kind(n)), n);
  EXPECT_FALSE(parse_node_kind("switch").has_value());
}

TEST(Graph, FlagsAndClosedForms) {
  Topology t = line();
  EXPECT_FALSE(t.supports_in_network_reduction());
  EXPECT_FALSE(t.bisection().has_value());
  t.set_in_network_reduction(true);
  t.set_bisection(sim::Bandwidth::gbyte_per_s(50));
  EXPECT_TRUE(t.supports_in_network_reduction());
  EXPECT_DOUBLE_EQ(t.bisection()->gbyte_per_second(), 50.0);
  EXPECT_TRUE(t.torus_shape().empty());
}

}  // namespace
}  // namespace trainsim::topology
