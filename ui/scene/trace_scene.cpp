#include "ui/scene/trace_scene.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "models/presets/catalog.hpp"
#include "sim/error.hpp"

namespace trainsim::ui {

using sim::config::Json;
using sim::task::TaskKind;

namespace {

bool contains(const std::string& s, const char* p) { return s.find(p) != std::string::npos; }

// A process or thread id: trace writers use numbers, older Kineto versions strings ("stream 7").
// Numbers sort first, by value; strings after, by text.
struct Id {
  int64_t number = 0;
  std::string text;  // empty for a number
  friend bool operator<(const Id& a, const Id& b) {
    return a.text.empty() != b.text.empty() ? a.text.empty() : (a.text.empty() ? a.number < b.number : a.text < b.text);
  }
  std::string name() const { return text.empty() ? std::to_string(number) : text; }
};
// A double that is a whole number inside int64's range, else nullopt (never an out-of-range cast).
std::optional<int64_t> whole(double v) {
  if (!(v >= -9.2e18 && v <= 9.2e18)) return std::nullopt;
  return static_cast<int64_t>(v);
}
Id id_of(const Json& e, const char* key) {
  const auto it = e.find(key);
  if (it == e.end() || it->is_null()) return {};
  if (it->is_number_integer()) return {it->get<int64_t>(), ""};
  if (it->is_number())
    if (const auto v = whole(it->get<double>())) return {*v, ""};
  return {0, it->is_string() ? it->get<std::string>() : it->dump()};
}
std::string string_of(const Json& e, const char* key) {
  const auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}
// An integer argument; `fallback` when absent. `where` names the event for the error when the
// value is past int64 (or, for `small`, past int32).
int64_t int_of(const Json& args, const char* key, int64_t fallback, const std::string& where, bool small = false) {
  const auto it = args.find(key);
  if (it == args.end() || !it->is_number()) return fallback;
  const auto v = it->is_number_integer() ? std::optional<int64_t>(it->get<int64_t>()) : whole(it->get<double>());
  const int64_t lim = small ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
  if (!v || *v > lim || *v < -lim)
    throw ConfigError(where + ".args." + key, it->dump() + " is out of range", "give a whole number, or drop it");
  return *v;
}

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

// The names the metadata ("M") events give processes and threads, and whether the trace has GPU
// events (then only those are device tasks: a profiler trace's CPU side is left out).
struct TraceNames {
  std::map<Id, std::string> process;                // pid -> name
  std::map<std::pair<Id, Id>, std::string> thread;  // (pid, tid) -> name
  bool gpu_events = false;
};

// Reads the process and thread names and whether there are GPU events.
TraceNames read_names(const Json& events) {
  TraceNames names;
  for (const Json& e : events) {
    if (!e.is_object()) continue;
    const std::string ph = string_of(e, "ph");
    if (ph == "M") {
      const auto args = e.find("args");
      if (args == e.end() || !args->is_object()) continue;
      const std::string name = string_of(*args, "name");
      if (name.empty()) continue;
      if (string_of(e, "name") == "process_name") names.process[id_of(e, "pid")] = name;
      if (string_of(e, "name") == "thread_name") names.thread[{id_of(e, "pid"), id_of(e, "tid")}] = name;
    }
    if (ph == "X") {
      const std::string cat = string_of(e, "cat");
      if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") names.gpu_events = true;
    }
  }
  return names;
}

// Timestamps in microseconds, moved to start at the first one before scaling to integer
// nanoseconds: Kineto's are absolute (about 1.7e15 us), beyond a double's nanosecond precision.
// The first is that of the earliest kept task or memory counter (CPU-side events left out).
double first_timestamp(const Json& events, bool gpu_events) {
  double ts_min = std::numeric_limits<double>::infinity();
  for (const Json& e : events) {
    if (!e.is_object() || !e.contains("ts") || !e["ts"].is_number()) continue;
    const std::string ph = string_of(e, "ph"), cat = string_of(e, "cat");
    const bool kept = ph == "X" && kind_of(cat, string_of(e, "name")) &&
                      (!gpu_events || cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset");
    if (kept || (ph == "C" && string_of(e, "name") == "memory")) ts_min = std::min(ts_min, e["ts"].get<double>());
  }
  return ts_min;
}

// One device task as read, before it is given a row and a label.
struct Raw {
  Id pid, tid;
  int64_t start, end;
  std::string name;
  TaskKind kind;
  int32_t mb, layer;
  int64_t bytes;
};

// The trace's device tasks ("X" events), memory counters per process and link counters by label.
struct TraceEvents {
  std::vector<Raw> raw;
  std::map<Id, MemoryTrack> memory;
  std::map<std::string, std::vector<std::pair<int64_t, double>>> link_counters;
};

// Reads the device tasks and counters, times in nanoseconds from `ts_min`.
TraceEvents read_events(const Json& events, bool gpu_events, double ts_min, const std::string& path) {
  std::string where;
  // Microseconds (from the first timestamp) to whole nanoseconds, within 140 years so that a start
  // plus a duration stays inside the clock's 292.
  auto ns_of = [&](double us, const char* key) {
    const auto v = whole(std::nearbyint(us * 1000.0));
    if (!v || std::abs(*v) > int64_t{4'400'000'000'000'000'000})
      throw ConfigError(where + "." + key, "is more than 140 years from the trace's first event",
                        "check the event's time and units (microseconds)");
    return *v;
  };
  TraceEvents out;
  for (size_t index = 0; index < events.size(); ++index) {
    const Json& e = events[index];
    where = path + ".traceEvents[" + std::to_string(index) + "]";
    if (!e.is_object()) continue;
    const std::string ph = string_of(e, "ph");
    if (ph != "X" && ph != "C") continue;
    if (!e.contains("ts") || !e["ts"].is_number()) continue;
    const int64_t ts = ns_of(e["ts"].get<double>() - ts_min, "ts");
    const Id pid = id_of(e, "pid");
    const std::string name = string_of(e, "name");
    const Json args = e.contains("args") && e["args"].is_object() ? e["args"] : Json::object();
    if (ph == "C") {
      if (name == "memory" && args.contains("used_bytes") && args["used_bytes"].is_number()) {
        MemoryTrack& m = out.memory[pid];
        m.capacity_bytes = int_of(args, "capacity_bytes", 0, where);
        m.points.emplace_back(ts, int_of(args, "used_bytes", 0, where));
      } else if (name.rfind("link ", 0) == 0 && args.contains("utilization") && args["utilization"].is_number()) {
        out.link_counters[name.substr(5)].emplace_back(ts, args["utilization"].get<double>());
      }
      continue;
    }
    const std::string cat = string_of(e, "cat");
    const auto kind = kind_of(cat, name);
    if (!kind || (gpu_events && cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset")) continue;
    const int64_t dur = e.contains("dur") && e["dur"].is_number() ? ns_of(e["dur"].get<double>(), "dur") : 0;
    const auto mb = static_cast<int32_t>(int_of(args, "microbatch", -1, where, true));
    const auto layer = static_cast<int32_t>(int_of(args, "layer", -1, where, true));
    std::string label =
        cat == "kernel" && *kind != TaskKind::kCompute ? comm_label(name) : base_label(name, mb >= 0, layer >= 0);
    out.raw.push_back({pid, id_of(e, "tid"), ts, ts + std::max<int64_t>(dur, 0), std::move(label), *kind, mb, layer,
                       int_of(args, "bytes", 0, where)});
  }
  return out;
}

// The rank of a process: N for trainsim's "rank N", else its pid.
int32_t rank_of(const TraceNames& names, const Id& pid) {
  const auto it = names.process.find(pid);
  if (it != names.process.end() && it->second.rfind("rank ", 0) == 0) {
    try {
      return static_cast<int32_t>(std::stol(it->second.substr(5)));
    } catch (const std::exception&) {
    }
  }
  return static_cast<int32_t>(pid.number);
}

// Rows: (pid, tid) of device events, in (pid, tid) order; then the tasks on them and the memory
// tracks.
void add_rows_and_tasks(Scene& scene, const TraceNames& names, TraceEvents& ev) {
  std::map<std::pair<Id, Id>, uint32_t> row_of;
  for (const Raw& r : ev.raw) row_of.emplace(std::make_pair(r.pid, r.tid), 0);
  for (auto& [key, row] : row_of) {
    row = static_cast<uint32_t>(scene.rows.size());
    const auto it = names.thread.find(key);
    std::string stream = it != names.thread.end() ? it->second : "thread " + key.second.name();
    scene.rows.push_back({rank_of(names, key.first), -1, std::move(stream)});
  }
  std::map<std::string, uint32_t> label_of;
  for (size_t i = 0; i < ev.raw.size(); ++i) {
    const Raw& r = ev.raw[i];
    auto [it, fresh] = label_of.emplace(r.name, static_cast<uint32_t>(scene.labels.size()));
    if (fresh) scene.labels.push_back(r.name);
    SceneTask t;
    t.start_ns = r.start;
    t.end_ns = r.end;
    t.row = row_of.at({r.pid, r.tid});
    t.label = it->second;
    t.category = traces::timeline_category(r.kind, r.name);
    t.microbatch = r.mb;
    t.layer = r.layer;
    t.task = static_cast<uint32_t>(i);
    t.bytes = r.bytes;
    scene.tasks.push_back(t);
  }
  for (auto& [pid, m] : ev.memory) {
    m.rank = rank_of(names, pid);
    scene.memory.push_back(std::move(m));
  }
}

// The links the counters name, as a small graph: "gpu0->nvswitch0 nvlink", each link's
// utilization in 50 bins of the span.
void add_links(Scene& scene, const std::map<std::string, std::vector<std::pair<int64_t, double>>>& link_counters) {
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
  // Both directions of a cable ("a->b", "b->a") draw as one line: the busier one per bin.
  std::map<std::tuple<uint32_t, uint32_t, std::string>, size_t> line_of;
  for (const auto& [label, points] : link_counters) {
    const auto arrow = label.find("->");
    const auto space = label.find(' ', arrow == std::string::npos ? 0 : arrow);
    if (arrow == std::string::npos || space == std::string::npos) continue;
    const uint32_t a = node(label.substr(0, arrow)), b = node(label.substr(arrow + 2, space - arrow - 2));
    const std::string kind = label.substr(space + 1);
    auto [it, fresh] = line_of.emplace(std::make_tuple(std::min(a, b), std::max(a, b), kind), scene.links.size());
    if (fresh) {
      TopoLink link;
      link.a = std::min(a, b);
      link.b = std::max(a, b);
      link.kind = kind;
      link.utilization.assign(bins, 0.f);
      scene.links.push_back(std::move(link));
    }
    TopoLink& link = scene.links[it->second];
    // Step function sampled at each bin's middle.
    for (int32_t bin = 0; bin < bins; ++bin) {
      const double t = (2.0 * bin + 1.0) * static_cast<double>(scene.span_ns) / (2.0 * bins);
      float u = 0;
      for (const auto& [ts, v] : points)
        if (static_cast<double>(ts) <= t) u = static_cast<float>(v);
      float& slot = link.utilization[static_cast<size_t>(bin)];
      slot = std::max(slot, u);
    }
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
  const TraceNames names = read_names(events);
  const double first = first_timestamp(events, names.gpu_events);
  TraceEvents ev = read_events(events, names.gpu_events, std::isfinite(first) ? first : 0.0, path);
  if (ev.raw.empty())
    throw ConfigError(
        path + ".traceEvents", "has no complete (\"X\") event of a device task",
        "give a trace written by `trainsim simulate --trace` or a PyTorch profiler trace with GPU kernels");
  for (auto& [pid, m] : ev.memory)
    std::stable_sort(m.points.begin(), m.points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  add_rows_and_tasks(scene, names, ev);
  scene.index_rows();
  if (!ev.link_counters.empty()) add_links(scene, ev.link_counters);
  std::ostringstream title;
  title << "trace " << path << " (" << names.process.size() << " processes, " << scene.rows.size() << " rows)";
  scene.title = title.str();
  scene.build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return scene;
}

Scene load_trace_scene(const std::string& file) {
  return trace_scene(models::presets::load_json_file(file, file), file);
}

}  // namespace trainsim::ui
