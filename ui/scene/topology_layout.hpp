#pragma once
// Where the topology view draws each node: tiers by kind for switched fabrics (GPUs at the bottom,
// then in-server switches and NICs, leaves / rails, spines, cores at the top), a grid for tori
// (z-planes side by side). Clusters with more GPUs than `max_gpus` draw each server as one node,
// and cables between the same two drawn nodes as one line, so a 16,384-GPU fabric stays readable.
// Servers that are rack-scale NVLink domains (gpus_per_tray < gpus_per_server: an NVL72 rack of 18
// 4-GPU trays) are drawn as racks (rack_layout.hpp) with the fabric's tiers above them, GPU by GPU
// up to `max_rack_gpus` GPUs (16 NVL72 racks), one node per rack beyond.

#include <cstddef>
#include <limits>
#include <vector>

#include "topology/graph.hpp"
#include "ui/scene/scene.hpp"

namespace trainsim::ui {

struct TopologyLayout {
  std::vector<TopoNode> nodes;
  std::vector<TopoLink> links;    // utilization left empty
  std::vector<uint32_t> link_of;  // per directed graph link: drawn link, or kInside
  std::vector<uint8_t> forward;   // per directed graph link: 1 when it runs from links[..].a to .b
  std::vector<TopoRack> racks;    // rack-scale servers, else empty
  bool collapsed = false;         // servers drawn as single nodes
  static constexpr uint32_t kInside = std::numeric_limits<uint32_t>::max();  // both ends in one drawn node
};

// `used_gpus`: the job's GPUs (GPUs 0 .. used_gpus - 1; 0 = all); the others of a rack the
// topology built whole are marked unused (TopoNode::used, TopoBox::used) and drawn dimmed.
TopologyLayout layout_topology(const topology::Topology& t, size_t max_gpus = 128, int64_t used_gpus = 0,
                               size_t max_rack_gpus = 1152);

}  // namespace trainsim::ui
