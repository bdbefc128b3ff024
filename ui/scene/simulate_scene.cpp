#include "ui/scene/simulate_scene.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <sstream>

#include "models/compute/peaks.hpp"
#include "models/workload/run/simulate.hpp"
#include "sim/error.hpp"
#include "sim/task/critical_path.hpp"
#include "topology/graph.hpp"
#include "traces/sinks/memory_slots.hpp"
#include "traces/sinks/recorders.hpp"
#include "ui/scene/topology_layout.hpp"

namespace trainsim::ui {

using sim::TaskIndex;
using sim::task::StreamId;

namespace {

void fill_tasks(Scene& scene, const models::workload::Workload& w, const sim::task::TaskExecutor& exec) {
  const sim::task::TaskGraph& g = w.graph;
  // Rows in (rank, stream id) order.
  std::vector<StreamId> order(g.stream_count());
  std::iota(order.begin(), order.end(), StreamId{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](StreamId a, StreamId b) { return g.stream(a).rank < g.stream(b).rank; });
  std::vector<uint32_t> row_of(g.stream_count());
  for (size_t r = 0; r < order.size(); ++r) {
    row_of[order[r]] = static_cast<uint32_t>(r);
    const sim::task::StreamInfo& s = g.stream(order[r]);
    int32_t stage = -1;
    for (const auto& ri : w.ranks)
      if (ri.rank == s.rank) stage = ri.stage;
    scene.rows.push_back({s.rank, stage, g.label(s.label)});
  }
  std::vector<int32_t> label_of(65536, -1);
  for (TaskIndex i = 0; i < g.size(); ++i) {
    if (exec.start_time(i).is_infinite() || exec.end_time(i).is_infinite()) continue;
    const sim::task::TaskSpec& spec = g.task(i).spec;
    int32_t& label = label_of[spec.label];
    if (label < 0) {
      label = static_cast<int32_t>(scene.labels.size());
      scene.labels.push_back(g.label(spec.label));
    }
    SceneTask t;
    t.start_ns = exec.start_time(i).count_ns();
    t.end_ns = exec.end_time(i).count_ns();
    t.label = static_cast<uint32_t>(label);
    t.category = traces::timeline_category(spec.kind, g.label(spec.label));
    t.microbatch = spec.microbatch;
    t.layer = spec.layer;
    t.task = static_cast<uint32_t>(i);
    t.bytes = static_cast<int64_t>(spec.bytes.count());
    const StreamId* s = g.streams_of(i);
    for (uint16_t k = 0; k < g.task(i).n_streams; ++k) {
      t.row = row_of[s[k]];
      scene.tasks.push_back(t);
    }
  }
  std::vector<uint8_t> on_path(g.size(), 0);
  for (TaskIndex i : sim::task::critical_path(g, exec)) on_path[i] = 1;
  for (SceneTask& t : scene.tasks) t.critical = on_path[t.task] != 0;
  scene.has_critical_path = true;
}

void fill_memory(Scene& scene, const models::workload::Job& job, const models::workload::Workload& w,
                 const sim::task::TaskExecutor& exec) {
  const auto slots = traces::memory_slots(job, w);
  std::vector<std::vector<std::pair<int64_t, int64_t>>> changes(slots.size());
  for (const auto& ev : w.memory_events) {
    if (ev.slot >= slots.size()) continue;
    const sim::Time t = ev.at_start ? exec.start_time(ev.task) : exec.end_time(ev.task);
    if (t.is_infinite()) continue;
    changes[ev.slot].emplace_back(t.count_ns(), ev.at_start ? ev.bytes : -ev.bytes);
  }
  for (size_t s = 0; s < slots.size(); ++s) {
    auto& ch = changes[s];
    std::stable_sort(ch.begin(), ch.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    MemoryTrack track;
    track.rank = slots[s].rank;
    track.capacity_bytes = slots[s].capacity_bytes;
    int64_t used = slots[s].static_bytes;
    track.points.emplace_back(0, used);
    for (const auto& [t, delta] : ch) {
      used += delta;
      if (track.points.back().first == t)
        track.points.back().second = used;
      else
        track.points.emplace_back(t, used);
    }
    scene.memory.push_back(std::move(track));
  }
}

}  // namespace

Scene simulate_scene(const models::workload::Job& job, const SceneOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  Scene scene;
  std::ostringstream title;
  title << job.model.name << " on " << job.gpus << " x " << job.gpu.name << " (tp " << job.tp << ", pp " << job.pp
        << ", dp " << job.dp << ", mb " << job.micro_batch << ", " << job.schedule << ")";
  scene.title = title.str();
  scene.source = "simulation";
  scene.gpus = job.gpus;

  models::workload::SimulateOptions opt;
  TopologyLayout layout;
  opt.on_network = [&](sim::flow::FlowNetwork&, const topology::Topology& t) {
    layout = layout_topology(t, o.max_gpus_drawn, job.gpus, o.max_rack_gpus_drawn);
    scene.topology = t.builder();
  };
  traces::RecorderOptions ro;
  ro.record_links = o.link_utilization && job.network == models::workload::Network::kFlow;
  traces::Recorders recorders(ro);
  recorders.attach(opt);
  sim::Time end;
  opt.after_run = [&](const models::workload::Workload& w, const sim::task::TaskExecutor& exec) {
    fill_tasks(scene, w, exec);
    fill_memory(scene, job, w, exec);
    for (const SceneTask& t : scene.tasks) end = std::max(end, sim::Time::ns(t.end_ns));
  };
  const models::workload::SimulationResult r = models::workload::simulate(job, opt);
  if (!r.fits)
    throw models::workload::does_not_fit_error(r, "try recompute, a larger tp or pp, or a smaller micro-batch");
  scene.iteration_s = r.iteration.seconds();
  scene.mfu = r.mfu;
  if (const auto low = models::compute::precision_peak(job.gpu, job.precision)) {
    scene.mfu_low = models::compute::utilization_of(r.mfu, job.gpu, *low);
    scene.mfu_low_peak = low->label;
  }
  scene.tokens_per_s = r.tokens_per_s;
  scene.nodes = std::move(layout.nodes);
  scene.links = std::move(layout.links);
  scene.racks = std::move(layout.racks);
  const traces::FlowRecorder* flows = recorders.flows();
  if (flows && end.count_ns() > 0) {
    // Per drawn link and bin: bytes each way over (capacity x bin time); the busier direction.
    const int32_t bins = std::max(1, o.link_bins);
    const double bin_s = end.seconds() / bins;
    std::vector<std::vector<double>> fwd(scene.links.size(), std::vector<double>(static_cast<size_t>(bins), 0.0));
    std::vector<std::vector<double>> back = fwd;
    for (size_t l = 0; l < layout.link_of.size(); ++l) {
      const uint32_t d = layout.link_of[l];
      if (d == TopologyLayout::kInside || !flows->link_used(l)) continue;
      const std::vector<double> bytes = flows->link_bin_bytes(l, end, bins);
      auto& into = layout.forward[l] ? fwd[d] : back[d];
      for (size_t b = 0; b < bytes.size() && b < into.size(); ++b) into[b] += bytes[b];
    }
    for (size_t d = 0; d < scene.links.size(); ++d) {
      TopoLink& link = scene.links[d];
      link.utilization.resize(static_cast<size_t>(bins));
      const double cap = link.capacity_bps * bin_s;
      for (size_t b = 0; b < static_cast<size_t>(bins); ++b)
        link.utilization[b] = cap > 0 ? static_cast<float>(std::min(1.0, std::max(fwd[d][b], back[d][b]) / cap)) : 0.f;
    }
    scene.link_utilization = true;
  }
  scene.index_rows();
  scene.build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return scene;
}

}  // namespace trainsim::ui
