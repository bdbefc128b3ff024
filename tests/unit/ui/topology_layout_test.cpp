#include "ui/scene/topology_layout.hpp"

#include <gtest/gtest.h>

#include <set>

#include "topology/spec.hpp"

namespace trainsim::ui {
namespace {

using sim::config::Json;

topology::Topology build(const Json& spec, int64_t gpus) { return topology::build_topology(spec, gpus, "network"); }

const Json kRail = {{"builder", "rail_optimized"}, {"gpus_per_node", 8},    {"nvlink_bandwidth", "450GBps"},
                    {"nic_bandwidth", "50GBps"},   {"servers_per_unit", 4}, {"spines", 2}};

TEST(TopologyLayout, TiersFromGpusUpToSpines) {
  const topology::Topology t = build(kRail, 32);
  const TopologyLayout l = layout_topology(t, 128);
  EXPECT_FALSE(l.collapsed);
  ASSERT_EQ(l.nodes.size(), t.node_count());
  float gpu_y = -1, leaf_y = -1, spine_y = -1;
  for (const TopoNode& n : l.nodes) {
    EXPECT_GE(n.x, 0.f);
    EXPECT_LE(n.x, 1.f);
    if (n.kind == topology::NodeKind::kGpu) gpu_y = n.y;
    if (n.kind == topology::NodeKind::kLeaf) leaf_y = n.y;
    if (n.kind == topology::NodeKind::kSpine) spine_y = n.y;
  }
  EXPECT_GT(gpu_y, leaf_y);  // screen y grows downwards: GPUs at the bottom
  EXPECT_GT(leaf_y, spine_y);
  // Every directed link maps to a drawn line, and every cable is counted once.
  int32_t cables = 0;
  for (const TopoLink& link : l.links) cables += link.cables;
  EXPECT_EQ(static_cast<size_t>(cables), t.cable_count());
  for (uint32_t d : l.link_of) EXPECT_NE(d, TopologyLayout::kInside);
}

TEST(TopologyLayout, LargeClustersCollapseServers) {
  const topology::Topology t = build(kRail, 256);
  const TopologyLayout l = layout_topology(t, 128);
  EXPECT_TRUE(l.collapsed);
  int32_t gpus = 0, servers = 0;
  for (const TopoNode& n : l.nodes)
    if (n.members > 1) {
      gpus += n.members;
      ++servers;
    }
  EXPECT_EQ(servers, 32);
  EXPECT_EQ(gpus, 256);
  // NVLink cables sit inside a server node; NIC cables merge per (server, leaf).
  size_t inside = 0;
  for (uint32_t d : l.link_of) inside += d == TopologyLayout::kInside;
  EXPECT_GT(inside, 0u);
  EXPECT_LT(l.links.size(), t.cable_count());
}

TEST(TopologyLayout, TorusIsAGrid) {
  const Json torus = {{"builder", "torus"}, {"shape", {4, 4}}, {"link_bandwidth", "100GBps"}, {"gpus_per_node", 4}};
  const topology::Topology t = build(torus, 16);
  const TopologyLayout l = layout_topology(t, 8);
  EXPECT_FALSE(l.collapsed);  // a torus is drawn whole
  std::set<std::pair<float, float>> cells;
  for (size_t g = 0; g < t.gpu_count(); ++g) {
    const TopoNode& n = l.nodes[t.gpu_node(g)];
    cells.insert({n.x, n.y});
  }
  EXPECT_EQ(cells.size(), 16u);
  // GPU 0 and GPU 1 share a row; GPU 0 and GPU 4 a column.
  EXPECT_EQ(l.nodes[t.gpu_node(0)].y, l.nodes[t.gpu_node(1)].y);
  EXPECT_EQ(l.nodes[t.gpu_node(0)].x, l.nodes[t.gpu_node(4)].x);
}

}  // namespace
}  // namespace trainsim::ui
