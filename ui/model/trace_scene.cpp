#include "ui/model/trace_scene.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "models/presets/catalog.hpp"
#include "sim/error.hpp"

namespace trainsim::ui {

using sim::config::Json;
using sim::task::TaskKind;

namespace {

bool contains(const std::string& s, const char* p) { return s.find(p) != std::string::npos; }

int64_t micros_to_ns(const Json& v) { return static_cast<int64_t>(std::llround(v.get<double>() * 1000.0)); }

// What an event's category says the task is; nullopt: not a device task (CPU side, flows, ...).
std::optional<TaskKind> kind_of(const std::string& cat, const std::string& name) {
  if (cat == "compute") return TaskKind::kCompute;
  if (cat == "collective") return TaskKind::kCollective;
  if (cat == "p2p") return TaskKind::kP2P;
  if (cat == "memory" || cat == "gpu_memcpy" || cat == "gpu_memset") return TaskKind::kMemory;
  if (cat == "kernel") {
    if (contains(name, "nccl") || contains(name, "NCCL")) {
      if (contains(name, "SendRecv") || contains(name, "Send") || contains(name, "Recv")) return TaskKind::kP2P;
      return TaskKind::kCollective;
    }
    return TaskKind::kCompute;
  }
  return std::nullopt;
}

// trainsim's names end with " mbN" and " LN" when the task has them: the label is what is before.
std::string base_label(const std::string& name, bool has_mb, bool has_layer) {
  std::string s = name;
  for (int k = 0; k < 2; ++k) {
    const auto sp = s.rfind(' ');
    if (sp == std::string::npos) break;
    const std::string tail = s.substr(sp + 1);
    if ((has_mb && tail.rfind("mb", 0) == 0) || (has_layer && tail.rfind("L", 0) == 0 && tail.size() > 1))
      s = s.substr(0, sp);
  }
  return s;
}

// NCCL kernel names ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL") say what the collective is.
std::string comm_label(const std::string& name) {
  for (const char* op : {"AllReduce", "AllGather", "ReduceScatter", "AllToAll", "Broadcast", "SendRecv", "Reduce"})
    if (contains(name, op)) return std::string("nccl ") + op;
  return name;
}

}  // namespace

bool is_trace(const Json& doc) {
  if (doc.is_object()) return doc.contains("traceEvents");
  return doc.is_array() && !doc.empty() && doc.front().is_object() && doc.front().contains("ph");
}

Scene trace_scene(const Json& doc, const std::string& path) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!is_trace(doc))
    throw ConfigError(path, "not a trace-event file: no \"traceEvents\" array",
                      "give a trace written by `trainsim simulate --trace` or by the PyTorch profiler");
  const Json& events = doc.is_object() ? doc.at("traceEvents") : doc;
  if (!events.is_array())
    throw ConfigError(path + ".traceEvents", "must be an array of events", "see docs/ui.md for the trace format");

  Scene scene;
  scene.source = path;
  std::map<int64_t, std::string> process;                     // pid -> name
  std::map<std::pair<int64_t, int64_t>, std::string> thread;  // (pid, tid) -> name
  bool gpu_events = false;
  for (const Json& e : events) {
    if (!e.is_object() || !e.contains("ph")) continue;
    const std::string ph = e.value("ph", "");
    if (ph == "M" && e.contains("args") && e["args"].contains("name") && e["args"]["name"].is_string()) {
      const int64_t pid = e.value("pid", Json(0)).is_number() ? e["pid"].get<int64_t>() : 0;
      if (e.value("name", "") == "process_name") process[pid] = e["args"]["name"].get<std::string>();
      if (e.value("name", "") == "thread_name")
        thread[{pid, e.value("tid", Json(0)).is_number() ? e["tid"].get<int64_t>() : 0}] =
            e["args"]["name"].get<std::string>();
    }
    if (ph == "X") {
      const std::string cat = e.value("cat", "");
      if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") gpu_events = true;
    }
  }

  // Rows: (pid, tid) of device events, in (pid, tid) order; trainsim's processes are "rank N".
  struct Raw {
    int64_t pid, tid, start, end;
    std::string name;
    TaskKind kind;
    int32_t mb, layer;
    int64_t bytes;
  };
  std::vector<Raw> raw;
  int64_t t_min = std::numeric_limits<int64_t>::max();
  std::map<int64_t, MemoryTrack> memory;
  std::map<std::string, std::vector<std::pair<int64_t, double>>> link_counters;
  for (const Json& e : events) {
    if (!e.is_object()) continue;
    const std::string ph = e.value("ph", "");
    if (ph != "X" && ph != "C") continue;
    if (!e.contains("ts") || !e["ts"].is_number() || !e.contains("pid") || !e["pid"].is_number()) continue;
    const int64_t ts = micros_to_ns(e["ts"]);
    const int64_t pid = e["pid"].get<int64_t>();
    const std::string name = e.value("name", "");
    const Json args = e.contains("args") && e["args"].is_object() ? e["args"] : Json::object();
    if (ph == "C") {
      if (name == "memory" && args.contains("used_bytes")) {
        MemoryTrack& m = memory[pid];
        m.capacity_bytes = args.value("capacity_bytes", int64_t{0});
        m.points.emplace_back(ts, args["used_bytes"].get<int64_t>());
      } else if (name.rfind("link ", 0) == 0 && args.contains("utilization")) {
        link_counters[name.substr(5)].emplace_back(ts, args["utilization"].get<double>());
      }
      continue;
    }
    const std::string cat = e.value("cat", "");
    const auto kind = kind_of(cat, name);
    if (!kind || (gpu_events && cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset")) continue;
    const int64_t tid = e.contains("tid") && e["tid"].is_number() ? e["tid"].get<int64_t>() : 0;
    const int64_t dur = e.contains("dur") && e["dur"].is_number() ? micros_to_ns(e["dur"]) : 0;
    const auto mb = static_cast<int32_t>(args.value("microbatch", int64_t{-1}));
    const auto layer = static_cast<int32_t>(args.value("layer", int64_t{-1}));
    std::string label =
        cat == "kernel" && *kind != TaskKind::kCompute ? comm_label(name) : base_label(name, mb >= 0, layer >= 0);
    raw.push_back({pid, tid, ts, ts + std::max<int64_t>(dur, 0), std::move(label), *kind, mb, layer,
                   args.value("bytes", int64_t{0})});
    t_min = std::min(t_min, ts);
  }
  if (raw.empty())
    throw ConfigError(
        path + ".traceEvents", "has no complete (\"X\") event of a device task",
        "give a trace written by `trainsim simulate --trace` or a PyTorch profiler trace with GPU kernels");
  // Kineto timestamps are absolute: the scene starts at the first task.
  for (auto& [pid, m] : memory) {
    std::stable_sort(m.points.begin(), m.points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    t_min = std::min(t_min, m.points.empty() ? t_min : m.points.front().first);
  }

  std::map<std::pair<int64_t, int64_t>, uint32_t> row_of;
  for (const Raw& r : raw) row_of.emplace(std::make_pair(r.pid, r.tid), 0);
  auto rank_of = [&](int64_t pid) {
    const auto it = process.find(pid);
    if (it != process.end() && it->second.rfind("rank ", 0) == 0) {
      try {
        return static_cast<int32_t>(std::stol(it->second.substr(5)));
      } catch (const std::exception&) {
      }
    }
    return static_cast<int32_t>(pid);
  };
  for (auto& [key, row] : row_of) {
    row = static_cast<uint32_t>(scene.rows.size());
    const auto it = thread.find(key);
    std::string stream = it != thread.end() ? it->second : "thread " + std::to_string(key.second);
    scene.rows.push_back({rank_of(key.first), -1, std::move(stream)});
  }
  std::map<std::string, uint32_t> label_of;
  for (size_t i = 0; i < raw.size(); ++i) {
    const Raw& r = raw[i];
    auto [it, fresh] = label_of.emplace(r.name, static_cast<uint32_t>(scene.labels.size()));
    if (fresh) scene.labels.push_back(r.name);
    SceneTask t;
    t.start_ns = r.start - t_min;
    t.end_ns = r.end - t_min;
    t.row = row_of.at({r.pid, r.tid});
    t.label = it->second;
    t.category = traces::timeline_category(r.kind, r.name);
    t.microbatch = r.mb;
    t.layer = r.layer;
    t.task = static_cast<uint32_t>(i);
    t.bytes = r.bytes;
    scene.tasks.push_back(t);
  }
  for (auto& [pid, m] : memory) {
    m.rank = rank_of(pid);
    for (auto& [t, b] : m.points) t -= t_min;
    scene.memory.push_back(std::move(m));
  }
  scene.index_rows();

  // The links the counters name, as a small graph: "gpu0->nvswitch0 nvlink".
  if (!link_counters.empty()) {
    std::map<std::string, uint32_t> node_of;
    auto node = [&](const std::string& n) {
      auto [it, fresh] = node_of.emplace(n, static_cast<uint32_t>(scene.nodes.size()));
      if (fresh) {
        TopoNode tn;
        tn.name = n;
        tn.kind = n.rfind("gpu", 0) == 0 ? topology::NodeKind::kGpu : topology::NodeKind::kLeaf;
        scene.nodes.push_back(tn);
      }
      return it->second;
    };
    const int32_t bins = 50;
    for (const auto& [label, points] : link_counters) {
      const auto arrow = label.find("->");
      const auto space = label.find(' ', arrow == std::string::npos ? 0 : arrow);
      if (arrow == std::string::npos || space == std::string::npos) continue;
      TopoLink link;
      link.a = node(label.substr(0, arrow));
      link.b = node(label.substr(arrow + 2, space - arrow - 2));
      link.kind = label.substr(space + 1);
      link.utilization.assign(bins, 0.f);
      // Step function sampled at each bin's middle.
      for (int32_t b = 0; b < bins; ++b) {
        const int64_t t = t_min + (2 * b + 1) * scene.span_ns / (2 * bins);
        float u = 0;
        for (const auto& [ts, v] : points)
          if (ts <= t) u = static_cast<float>(v);
        link.utilization[static_cast<size_t>(b)] = u;
      }
      scene.links.push_back(std::move(link));
    }
    // GPUs along the bottom, everything else along the top.
    std::vector<uint32_t> low, high;
    for (uint32_t i = 0; i < scene.nodes.size(); ++i)
      (scene.nodes[i].kind == topology::NodeKind::kGpu ? low : high).push_back(i);
    for (auto* tier : {&low, &high})
      for (size_t k = 0; k < tier->size(); ++k) {
        TopoNode& n = scene.nodes[(*tier)[k]];
        n.x = static_cast<float>((static_cast<double>(k) + 0.5) / static_cast<double>(tier->size()));
        n.y = tier == &low ? 0.85f : 0.15f;
      }
    scene.link_utilization = true;
    scene.topology = "links from the trace's counters";
  }
  std::ostringstream title;
  title << "trace " << path << " (" << process.size() << " processes, " << scene.rows.size() << " rows)";
  scene.title = title.str();
  scene.build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return scene;
}

Scene load_trace_scene(const std::string& file) {
  return trace_scene(models::presets::load_json_file(file, file), file);
}

}  // namespace trainsim::ui
