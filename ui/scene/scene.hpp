#pragma once
// What the viewer draws: one simulated (or imported) iteration flattened into plain arrays that
// the views read every frame. A Scene is built once (simulate_scene.hpp from a job, trace_scene.hpp
// from a trace file) and never changes afterwards, so the GUI thread can draw one while a worker
// builds the next. Nothing here depends on ImGui or OpenGL: it is unit-tested headless.

#include <cstdint>
#include <string>
#include <vector>

#include "topology/graph.hpp"
#include "traces/svg/timeline.hpp"

namespace trainsim::ui {

// A Gantt row: one stream of one simulated rank.
struct SceneRow {
  int32_t rank = 0;
  int32_t stage = -1;  // pipeline stage (-1: unknown, e.g. an imported trace)
  std::string stream;  // "compute", "tp", "dp", "pp", "cp", "ep", "d2h", "h2d", or a trace's thread name
};

// One task on one row (a task occupying n streams appears n times, with the same `task`).
struct SceneTask {
  int64_t start_ns = 0, end_ns = 0;
  uint32_t row = 0;
  uint32_t label = 0;  // into Scene::labels
  traces::TimelineCategory category = traces::TimelineCategory::kForward;
  int32_t microbatch = -1, layer = -1;
  uint32_t task = 0;  // the task's id (graph index, or event index for a trace)
  int64_t bytes = 0;  // communication / copy tasks
  bool critical = false;
};

// Device memory in use on one rank over the iteration: a step function.
struct MemoryTrack {
  int32_t rank = 0;
  int64_t capacity_bytes = 0;                       // usable device memory (0: unknown)
  std::vector<std::pair<int64_t, int64_t>> points;  // (time ns, bytes in use from then on), time-sorted
  int64_t peak() const;
};

// A node of the topology view, laid out in [0, 1] x [0, 1] (topology_layout.hpp).
struct TopoNode {
  std::string name;
  topology::NodeKind kind = topology::NodeKind::kGpu;
  float x = 0, y = 0;
  int32_t members = 1;  // graph nodes drawn as this one (a collapsed server holds its GPUs)
  int32_t rack = -1;    // its rack in Scene::racks (-1: not in a rack)
  int32_t tray = -1;    // a GPU's compute tray in its rack (-1: not a GPU of a rack, or a whole rack)
  bool used = true;     // false: a GPU the topology built (whole racks) that the job does not use
};

// A rectangle of the topology view, in the nodes' [0, 1] x [0, 1] coordinates (y grows downwards).
struct TopoBox {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  std::string label;  // "tray 0", ...
  bool used = true;   // holds a GPU the job uses
  bool contains(float x, float y) const { return x >= x0 && x <= x1 && y >= y0 && y <= y1; }
};

// A server that is a rack-scale NVLink domain (an NVL72 rack: 18 compute trays of 4 GPUs, 9
// NVLink switch trays between trays 9 and 10), drawn as a rack: compute trays stacked top to bottom,
// the NVLink switch trays as one block among them (the graph's one NVSwitch vertex stands for all).
struct TopoRack {
  std::string name;            // "NVL72 rack 3"
  std::string label;           // "NVL72 rack 3 (72 GPUs)", ", 40 used" added when the job uses part of it
  TopoBox box;                 // the whole rack, its label in a header row at the top
  std::vector<TopoBox> trays;  // compute trays, top to bottom
  TopoBox switches;            // the NVLink switch trays' block
  int32_t switch_trays = 1;    // drawn as this many stripes (NVL72: 9)
  int32_t gpus = 0, used_gpus = 0;
};

// A cable of the topology view (both directions drawn as one line).
struct TopoLink {
  uint32_t a = 0, b = 0;           // into Scene::nodes
  std::string kind;                // "nvlink", "ib", ...
  double capacity_bps = 0;         // bytes/s per direction, all its cables together
  int32_t cables = 1;              // cables merged into this line
  std::vector<float> utilization;  // per time bin, 0..1, the busier direction
  float mean_utilization() const;
  float utilization_in(int64_t t0, int64_t t1, int64_t span_ns) const;  // mean over a time window
};

struct Scene {
  std::string title;   // "llama3-70b on 1024 x H100 (tp 8, pp 4, dp 32)"
  std::string source;  // "simulation", or the trace file's path
  int64_t span_ns = 1;
  std::vector<SceneRow> rows;
  std::vector<std::string> labels;
  std::vector<SceneTask> tasks;     // sorted by (row, start)
  std::vector<uint32_t> row_begin;  // tasks of row r: [row_begin[r], row_begin[r + 1])
  std::vector<MemoryTrack> memory;
  std::vector<TopoNode> nodes;
  std::vector<TopoLink> links;
  std::vector<TopoRack> racks;    // servers drawn as racks (rack-scale NVLink domains), else empty
  std::string topology;           // builder name (fat_tree, rail_optimized, torus, ...)
  bool link_utilization = false;  // links carry measured utilization
  bool has_critical_path = false;
  // Headline numbers (0 when unknown). mfu is against the dense BF16 peak; a quantized job also has
  // mfu_low against its precision's dense peak, named by mfu_low_peak ("FP8"; models/compute/peaks.hpp).
  double iteration_s = 0, mfu = 0, tokens_per_s = 0, mfu_low = 0;
  std::string mfu_low_peak;
  int64_t gpus = 0;
  double build_ms = 0;  // wall time to simulate / load it

  // Sorts tasks by (row, start) and fills row_begin; builders call it last.
  void index_rows();
  // The task under time t on row r (the last one starting at or before t that ends after t), or -1.
  int64_t task_at(uint32_t row, int64_t t_ns, int64_t slack_ns = 0) const;
  // Idle share of a row over the iteration: the bubbles.
  double idle_share(uint32_t row) const;
};

}  // namespace trainsim::ui
