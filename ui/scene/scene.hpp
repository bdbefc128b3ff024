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
  std::string topology;           // builder name (fat_tree, rail_optimized, torus, ...)
  bool link_utilization = false;  // links carry measured utilization
  bool has_critical_path = false;
  // Headline numbers (0 when unknown).
  double iteration_s = 0, mfu = 0, tokens_per_s = 0;
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
