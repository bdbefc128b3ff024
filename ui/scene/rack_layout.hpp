#pragma once
// Geometry of rack-scale servers in the topology view (topology_layout.hpp): racks side by side
// along the bottom of the view, each a column of compute trays with the NVLink switch trays in a
// block among them, as an NVL72 rack has them (10 compute trays above the 9 switch trays, 8 below:
// NVIDIA's GB200 NVL72 reference rack). Counts in, boxes out; no graph.

#include <cstdint>
#include <utility>
#include <vector>

#include "ui/scene/scene.hpp"

namespace trainsim::ui {

struct RackShape {
  int64_t racks = 1;
  int64_t gpus_per_rack = 72;
  int64_t gpus_per_tray = 4;
  int64_t used_gpus = 0;  // GPUs 0 .. used_gpus - 1 are the job's (rack r holds r x gpus_per_rack ...); 0: all
  float top = 0.3f;       // the racks span [top, bottom] of the view
  float bottom = 0.99f;
};

// Compute trays above the switch block in a rack of `trays` trays (NVL72: 10 of 18).
int64_t trays_above_switches(int64_t trays);

std::vector<TopoRack> lay_out_racks(const RackShape& shape);

// Where GPU `local` of a rack sits: its cell in its tray, right of the tray's label.
std::pair<float, float> rack_gpu_position(const TopoRack& rack, int64_t local, int64_t gpus_per_tray);

// Where the k-th of `count` in-rack switches (the NVSwitch vertex, any CPU or NIC) sits: spread
// along the middle of the switch block, right of its label as a tray's GPUs are.
std::pair<float, float> rack_switch_position(const TopoRack& rack, size_t k, size_t count);

}  // namespace trainsim::ui
