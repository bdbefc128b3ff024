#include "ui/scene/topology_layout.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "topology/spec.hpp"
#include "ui/scene/rack_layout.hpp"

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
  EXPECT_TRUE(l.racks.empty());  // an 8-GPU server is one host: no rack drawn
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

// What models/hardware/cluster_spec.cpp derives for an NVL72 cluster (gpus_per_node 4,
// nvlink_domain 72): each 72-GPU rack one server (one NVSwitch vertex), trays of 4 GPUs, a NIC per
// GPU into a rail leaf.
const Json kNvl72 = {
    {"builder", "rail_optimized"}, {"gpus_per_node", 72},   {"gpus_per_tray", 4}, {"nvlink_bandwidth", "900GBps"},
    {"nic_bandwidth", "50GBps"},   {"servers_per_unit", 8}, {"spines", 8},        {"sharp", true}};

bool inside(const TopoBox& b, const TopoNode& n) { return b.contains(n.x, n.y); }
bool inside(const TopoBox& outer, const TopoBox& b) {
  return b.x0 >= outer.x0 && b.x1 <= outer.x1 && b.y0 >= outer.y0 && b.y1 <= outer.y1;
}

TEST(TopologyLayout, Nvl72RacksOfTraysWithTheSwitchBlockInside) {
  // 256 GPUs are 3.5 racks: the topology builds 4 whole racks (network_gpus rounds up).
  const topology::Topology t = build(kNvl72, 288);
  ASSERT_EQ(t.gpus_per_server(), 72);
  ASSERT_EQ(t.gpus_per_tray(), 4);
  const TopologyLayout l = layout_topology(t, 128, 256);
  EXPECT_FALSE(l.collapsed);  // 288 GPUs: drawn GPU by GPU, in their racks
  ASSERT_EQ(l.nodes.size(), t.node_count());
  ASSERT_EQ(l.racks.size(), 4u);
  for (size_t r = 0; r < l.racks.size(); ++r) {
    const TopoRack& rack = l.racks[r];
    EXPECT_EQ(rack.name, "NVL72 rack " + std::to_string(r));
    EXPECT_EQ(rack.switch_trays, 9);
    ASSERT_EQ(rack.trays.size(), 18u);
    for (size_t k = 0; k < rack.trays.size(); ++k) {
      EXPECT_EQ(rack.trays[k].label, "tray " + std::to_string(k));
      EXPECT_TRUE(inside(rack.box, rack.trays[k])) << rack.name << " tray " << k;
      if (k > 0) {
        EXPECT_GT(rack.trays[k].y0, rack.trays[k - 1].y1) << "trays stacked top to bottom";
      }
    }
    // The switch trays' block inside the rack, between compute trays 9 and 10 (10 above, 8 below).
    EXPECT_TRUE(inside(rack.box, rack.switches));
    EXPECT_GE(rack.switches.y0, rack.trays[9].y1);
    EXPECT_LE(rack.switches.y1, rack.trays[10].y0);
    if (r > 0) {
      EXPECT_GT(rack.box.x0, l.racks[r - 1].box.x1) << "racks side by side";
    }
  }
  EXPECT_EQ(l.racks[0].label, "NVL72 rack 0 (72 GPUs)");
  EXPECT_EQ(l.racks[3].label, "NVL72 rack 3 (72 GPUs, 40 used)");
  EXPECT_EQ(l.racks[3].used_gpus, 40);

  // Each GPU in its rack's tray, 4 to a row, left to right; the next tray's row below.
  size_t unused = 0;
  for (size_t g = 0; g < t.gpu_count(); ++g) {
    const TopoNode& n = l.nodes[t.gpu_node(g)];
    const auto rack = static_cast<int32_t>(g / 72), local = static_cast<int32_t>(g % 72);
    ASSERT_EQ(n.rack, rack);
    ASSERT_EQ(n.tray, local / 4);
    EXPECT_TRUE(inside(l.racks[static_cast<size_t>(rack)].trays[static_cast<size_t>(local / 4)], n)) << "gpu " << g;
    EXPECT_EQ(n.used, g < 256) << "gpu " << g;
    unused += !n.used;
    if (local % 4 != 0) {
      const TopoNode& left = l.nodes[t.gpu_node(g - 1)];
      EXPECT_EQ(n.y, left.y);
      EXPECT_GT(n.x, left.x);
    } else if (local > 0) {
      EXPECT_GT(n.y, l.nodes[t.gpu_node(g - 4)].y);
    }
  }
  EXPECT_EQ(unused, 32u);
  EXPECT_TRUE(l.racks[3].trays[9].used);
  EXPECT_FALSE(l.racks[3].trays[10].used);

  // The NVSwitch vertex (all 9 switch trays) in its rack's switch block; rail leaves and spines above
  // the racks, spines on top.
  size_t switches = 0, leaves = 0;
  for (const TopoNode& n : l.nodes) {
    if (n.kind == topology::NodeKind::kNvSwitch) {
      ++switches;
      ASSERT_GE(n.rack, 0);
      EXPECT_TRUE(inside(l.racks[static_cast<size_t>(n.rack)].switches, n));
    } else if (n.kind == topology::NodeKind::kLeaf) {
      ++leaves;
      EXPECT_LT(n.y, l.racks[0].box.y0);
      EXPECT_EQ(n.rack, -1);
    } else if (n.kind == topology::NodeKind::kSpine) {
      for (const TopoNode& m : l.nodes) {
        if (m.kind == topology::NodeKind::kLeaf) {
          EXPECT_LT(n.y, m.y);
        }
      }
    }
    EXPECT_GE(n.x, 0.f);
    EXPECT_LE(n.x, 1.f);
    EXPECT_GE(n.y, 0.f);
    EXPECT_LE(n.y, 1.f);
  }
  EXPECT_EQ(switches, 4u);
  EXPECT_EQ(leaves, 72u);  // one unit of 8 racks: a rail leaf per GPU index
  int32_t cables = 0;
  for (const TopoLink& link : l.links) cables += link.cables;
  EXPECT_EQ(static_cast<size_t>(cables), t.cable_count());
}

// The simulation holds its topology by a copy or a move (network_runner.cpp): the trays survive.
TEST(TopologyLayout, RacksSurviveCopiesAndMoves) {
  topology::Topology built = build(kNvl72, 144);
  const topology::Topology copy(built);
  topology::Topology moved(std::move(built));
  topology::Topology assigned;
  assigned = copy;
  for (const topology::Topology* t : std::vector<const topology::Topology*>{&copy, &moved, &assigned}) {
    EXPECT_EQ(t->gpus_per_tray(), 4);
    EXPECT_EQ(layout_topology(*t).racks.size(), 2u);
  }
}

TEST(TopologyLayout, ManyRacksCollapseToOneNodeEach) {
  const topology::Topology t = build(kNvl72, 288);
  const TopologyLayout l = layout_topology(t, 128, 0, /*max_rack_gpus=*/144);
  EXPECT_TRUE(l.collapsed);
  ASSERT_EQ(l.racks.size(), 4u);
  int32_t racks = 0;
  for (const TopoNode& n : l.nodes)
    if (n.members > 1) {
      ++racks;
      EXPECT_EQ(n.members, 72);
      EXPECT_EQ(n.name, "rack " + std::to_string(n.rack));
      EXPECT_TRUE(n.used);  // no job size given: every GPU is used
      const TopoBox& box = l.racks[static_cast<size_t>(n.rack)].box;
      EXPECT_GE(n.x, box.x0);
      EXPECT_LE(n.x, box.x1);
      EXPECT_FLOAT_EQ(n.y, box.y0);
    }
  EXPECT_EQ(racks, 4);
  EXPECT_EQ(l.racks[3].label, "NVL72 rack 3 (72 GPUs)");
}

TEST(RackLayout, Nvl72HasTenTraysAboveTheSwitchesAndEightBelow) {
  EXPECT_EQ(trays_above_switches(18), 10);
  RackShape one;
  one.racks = 1;
  one.top = 0.1f;
  const std::vector<TopoRack> racks = lay_out_racks(one);
  ASSERT_EQ(racks.size(), 1u);
  const TopoRack& rack = racks[0];
  EXPECT_FLOAT_EQ(rack.box.y0, 0.1f);
  EXPECT_FLOAT_EQ(rack.box.y1, 0.99f);
  EXPECT_LE(rack.box.x1 - rack.box.x0, 0.3f + 1e-6f);  // one rack stays rack-shaped, centred
  EXPECT_FLOAT_EQ(0.5f * (rack.box.x0 + rack.box.x1), 0.5f);
  // GPUs 0-3 in tray 0, left to right, right of the tray's label.
  float last = rack.trays[0].x0;
  for (int64_t local = 0; local < 4; ++local) {
    const auto [x, y] = rack_gpu_position(rack, local, 4);
    EXPECT_GT(x, last);
    EXPECT_TRUE(rack.trays[0].contains(x, y));
    last = x;
  }
  const auto [x71, y71] = rack_gpu_position(rack, 71, 4);
  EXPECT_TRUE(rack.trays[17].contains(x71, y71));
}

}  // namespace
}  // namespace trainsim::ui
