#include "traces/kineto/trace.hpp"
#include "sim/config/schema.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>
#include <unordered_map>

#include "models/presets/catalog.hpp"
#include "sim/checked.hpp"
#include "sim/error.hpp"

namespace trainsim::traces {

using sim::config::Json;

namespace {

size_t su(int64_t v) { return static_cast<size_t>(v); }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The one-line error for a malformed event field.
[[noreturn]] void bad_field(const std::string& path, size_t index, const std::string& field, const std::string& what,
                            const Json& got) {
  std::ostringstream msg;
  msg << "traceEvents[" << index << "]." << field << ": expected " << what << ", got " << sim::config::show(got);
  throw ConfigError(path, msg.str(), "export the trace with torch.profiler's export_chrome_trace");
}

// Microseconds (Kineto's unit, three decimals) to integer nanoseconds.
sim::Time micros(const Json& e, const char* key, const std::string& path, size_t index) {
  auto it = e.find(key);
  if (it == e.end() || !it->is_number() || !std::isfinite(it->get<double>()))
    bad_field(path, index, key, "a number of microseconds", it == e.end() ? Json() : *it);
  return sim::Time::ns(sim::checked_int64(std::round(it->get<double>() * 1000.0),
                                          path + ": traceEvents[" + std::to_string(index) + "]." + key,
                                          "microseconds within 292 years: export the trace with torch.profiler"));
}

// An integer argument that may be written as a number or as a decimal string; `fallback` when absent.
int64_t int_arg(const Json& args, const char* key, int64_t fallback) {
  auto it = args.find(key);
  if (it == args.end()) return fallback;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number())
    return sim::checked_int64(std::round(it->get<double>()), std::string("args.") + key, "give a whole number");
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && end == s.c_str() + s.size()) return v;
  }
  return fallback;
}

std::string string_arg(const Json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// "Input Dims": a tensor argument is a list of integers; anything else (a scalar's [], a list of
// tensors' nested lists) has no dims.
std::vector<std::vector<int64_t>> input_dims(const Json& args) {
  std::vector<std::vector<int64_t>> out;
  auto it = args.find("Input Dims");
  if (it == args.end() || !it->is_array()) return out;
  for (const Json& d : *it) {
    std::vector<int64_t> dims;
    bool tensor = d.is_array();
    if (tensor)
      for (const Json& x : d) {
        if (!x.is_number_integer()) {
          tensor = false;
          break;
        }
        dims.push_back(x.get<int64_t>());
      }
    out.push_back(tensor ? dims : std::vector<int64_t>{});
  }
  return out;
}

std::vector<std::string> input_types(const Json& args) {
  std::vector<std::string> out;
  auto it = args.find("Input type");
  if (it == args.end() || !it->is_array()) return out;
  for (const Json& t : *it) out.push_back(t.is_string() ? t.get<std::string>() : "");
  return out;
}

// "ProfilerStep#12" -> 12; -1 for any other name.
int64_t step_number(const std::string& name) {
  static const std::string prefix = "ProfilerStep#";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return -1;
  int64_t n = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i])) || n > 1000000000) return -1;
    n = n * 10 + (name[i] - '0');
  }
  return n;
}

int64_t id_of(const Json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  return 0;  // Kineto's named pseudo-processes ("Spans", "Traces") carry no activity we read
}

struct Launch {
  sim::Time ts;
  int64_t thread = 0;
  int64_t external_id = -1;
};

struct CollectiveArgs {
  std::string name, dtype;
  int64_t in = 0, out = 0, group = 0;
};

bool read_collective(const Json& args, CollectiveArgs& c) {
  if (!args.contains("Collective name")) return false;
  c.name = string_arg(args, "Collective name");
  c.dtype = string_arg(args, "dtype");
  c.in = int_arg(args, "In msg nelems", 0);
  c.out = int_arg(args, "Out msg nelems", 0);
  c.group = int_arg(args, "Group size", 0);
  return true;
}

struct Window {
  sim::Time start = sim::Time::infinite(), end = sim::Time::zero();
  void add(sim::Time s, sim::Time e) {
    start = std::min(start, s);
    end = std::max(end, e);
  }
};

// What the event pass collects beside the trace's ops and kernels, for linking them afterwards.
struct EventTables {
  std::unordered_map<int64_t, Launch> launches;               // correlation -> runtime launch
  std::unordered_map<int64_t, CollectiveArgs> op_collective;  // External id -> record_param_comms args
  std::vector<int64_t> kernel_external;                       // parallel to t.kernels before sorting
  std::map<int64_t, Window> cpu_steps, gpu_steps;             // ProfilerStep#N annotations
};

// The trace's device, rank and trainsim metadata.
void read_header(const Json& j, KinetoTrace& t) {
  if (auto dp = j.find("deviceProperties"); dp != j.end() && dp->is_array() && !dp->empty() && (*dp)[0].is_object()) {
    t.device_name = string_arg((*dp)[0], "name");
    t.device_memory = int_arg((*dp)[0], "totalGlobalMem", 0);
  }
  if (auto di = j.find("distributedInfo"); di != j.end() && di->is_object()) {
    t.rank = int_arg(*di, "rank", 0);
    t.world_size = std::max<int64_t>(1, int_arg(*di, "world_size", 1));
  }
  if (auto md = j.find("trainsim"); md != j.end()) t.metadata = *md;
}

// One pass over the complete ("X") events: operators and kernels into `t`, runtime launches,
// collective arguments and step annotations into `tables`.
void read_events(const Json& events, const std::string& path, KinetoTrace& t, EventTables& tables) {
  for (size_t i = 0; i < events.size(); ++i) {
    const Json& e = events[i];
    if (!e.is_object()) bad_field(path, i, "", "an object", e);
    auto ph = e.find("ph");
    if (ph == e.end() || !ph->is_string() || ph->get_ref<const std::string&>() != "X") continue;
    const std::string cat = lower(string_arg(e, "cat"));
    static const Json kNoArgs = Json::object();
    auto args_it = e.find("args");
    const Json& args = args_it != e.end() && args_it->is_object() ? *args_it : kNoArgs;
    const std::string name = string_arg(e, "name");
    if (cat == "cpu_op" || cat == "operator") {
      KinetoOp op;
      op.name = name;
      op.start = micros(e, "ts", path, i);
      op.duration = micros(e, "dur", path, i);
      op.external_id = int_arg(args, "External id", -1);
      op.thread = id_of(e.value("tid", Json()));
      op.input_dims = input_dims(args);
      op.input_types = input_types(args);
      CollectiveArgs c;
      if (op.external_id >= 0 && read_collective(args, c)) tables.op_collective[op.external_id] = c;
      t.ops.push_back(std::move(op));
    } else if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "runtime") {
      const int64_t corr = int_arg(args, "correlation", -1);
      if (corr >= 0)
        tables.launches[corr] =
            Launch{micros(e, "ts", path, i), id_of(e.value("tid", Json())), int_arg(args, "External id", -1)};
    } else if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "memcpy" || cat == "memset") {
      KinetoKernel k;
      k.name = name;
      k.category = cat == "memcpy" ? "gpu_memcpy" : cat == "memset" ? "gpu_memset" : cat;
      k.start = micros(e, "ts", path, i);
      k.duration = micros(e, "dur", path, i);
      k.device = int_arg(args, "device", id_of(e.value("pid", Json())));
      k.stream = int_arg(args, "stream", id_of(e.value("tid", Json())));
      k.correlation = int_arg(args, "correlation", -1);
      CollectiveArgs c;
      if (read_collective(args, c)) {
        k.collective = c.name;
        k.dtype = c.dtype;
        k.in_nelems = c.in;
        k.out_nelems = c.out;
        k.group_size = c.group;
      }
      tables.kernel_external.push_back(int_arg(args, "External id", -1));
      t.kernels.push_back(std::move(k));
    } else if (cat == "user_annotation" || cat == "gpu_user_annotation") {
      const int64_t n = step_number(name);
      if (n < 0) continue;
      const sim::Time s = micros(e, "ts", path, i), d = micros(e, "dur", path, i);
      (cat == "gpu_user_annotation" ? tables.gpu_steps : tables.cpu_steps)[n].add(s, s + d);
    }
  }
}

// The operators by External id and by thread (in start order), to find a kernel's operator.
struct OpIndex {
  const KinetoTrace& t;
  std::unordered_map<int64_t, int32_t> by_external;
  std::map<int64_t, std::vector<int32_t>> by_thread;  // in start order

  // The innermost operator on `thread` whose span holds `ts`: the latest-starting one that does.
  int32_t enclosing(int64_t thread, sim::Time ts) const {
    auto it = by_thread.find(thread);
    if (it == by_thread.end()) return -1;
    const std::vector<int32_t>& v = it->second;
    auto pos = std::upper_bound(v.begin(), v.end(), ts, [&](sim::Time x, int32_t o) { return x < t.ops[su(o)].start; });
    for (int steps = 0; pos != v.begin() && steps < 4096; ++steps) {
      --pos;
      const KinetoOp& op = t.ops[su(*pos)];
      if (op.start + op.duration >= ts) return *pos;
    }
    return -1;
  }
};

// Operators in start order (outer before inner at equal starts: longer first), and their index.
OpIndex sort_ops(KinetoTrace& t) {
  std::vector<size_t> op_order(t.ops.size());
  for (size_t i = 0; i < op_order.size(); ++i) op_order[i] = i;
  std::stable_sort(op_order.begin(), op_order.end(), [&](size_t a, size_t b) {
    if (t.ops[a].start != t.ops[b].start) return t.ops[a].start < t.ops[b].start;
    return t.ops[a].duration > t.ops[b].duration;
  });
  std::vector<KinetoOp> ops;
  ops.reserve(t.ops.size());
  for (size_t i : op_order) ops.push_back(std::move(t.ops[i]));
  t.ops = std::move(ops);
  OpIndex index{t, {}, {}};
  for (size_t i = 0; i < t.ops.size(); ++i) {
    if (t.ops[i].external_id >= 0) index.by_external.emplace(t.ops[i].external_id, static_cast<int32_t>(i));
    index.by_thread[t.ops[i].thread].push_back(static_cast<int32_t>(i));
  }
  return index;
}

// Kernels in start order (then device, stream), each linked to its operator (by External id, its
// launch's, or the operator enclosing its launch) with the operator's collective arguments when
// it has none. Returns when each kernel was launched (its start when unknown).
std::vector<sim::Time> link_kernels(KinetoTrace& t, const EventTables& tables, const OpIndex& index) {
  std::vector<size_t> k_order(t.kernels.size());
  for (size_t i = 0; i < k_order.size(); ++i) k_order[i] = i;
  std::stable_sort(k_order.begin(), k_order.end(), [&](size_t a, size_t b) {
    const KinetoKernel &x = t.kernels[a], &y = t.kernels[b];
    if (x.start != y.start) return x.start < y.start;
    if (x.device != y.device) return x.device < y.device;
    return x.stream < y.stream;
  });
  const auto& launches = tables.launches;
  const auto& op_by_external = index.by_external;
  std::vector<KinetoKernel> kernels;
  std::vector<sim::Time> launch_ts;  // when each kernel was launched (its start when unknown)
  kernels.reserve(t.kernels.size());
  for (size_t i : k_order) {
    KinetoKernel k = std::move(t.kernels[i]);
    const int64_t ext = tables.kernel_external[i];
    auto launch = k.correlation >= 0 ? launches.find(k.correlation) : launches.end();
    int32_t op = -1;
    if (auto o = ext >= 0 ? op_by_external.find(ext) : op_by_external.end(); o != op_by_external.end())
      op = o->second;
    else if (launch != launches.end() && launch->second.external_id >= 0 &&
             op_by_external.count(launch->second.external_id))
      op = op_by_external.at(launch->second.external_id);
    else if (launch != launches.end())
      op = index.enclosing(launch->second.thread, launch->second.ts);
    k.op = op;
    if (op < 0) ++t.unlinked_kernels;
    if (op >= 0 && k.collective.empty())
      if (auto c = tables.op_collective.find(t.ops[su(op)].external_id); c != tables.op_collective.end()) {
        k.collective = c->second.name;
        k.dtype = c->second.dtype;
        k.in_nelems = c->second.in;
        k.out_nelems = c->second.out;
        k.group_size = c->second.group;
      }
    launch_ts.push_back(launch != launches.end() ? launch->second.ts : op >= 0 ? t.ops[su(op)].start : k.start);
    kernels.push_back(std::move(k));
  }
  t.kernels = std::move(kernels);
  for (size_t i = 0; i < t.kernels.size(); ++i)
    if (t.kernels[i].op >= 0) t.ops[su(t.kernels[i].op)].kernels.push_back(static_cast<int32_t>(i));
  return launch_ts;
}

// Steps: the GPU annotation when there is one, else the GPU window of what each CPU step launched;
// without either, one step spanning every kernel.
void find_steps(KinetoTrace& t, const EventTables& tables, const std::vector<sim::Time>& launch_ts) {
  std::map<int64_t, Window> windows = tables.gpu_steps;
  if (windows.empty() && !tables.cpu_steps.empty()) {
    for (size_t i = 0; i < t.kernels.size(); ++i)
      for (const auto& [n, w] : tables.cpu_steps)
        if (launch_ts[i] >= w.start && launch_ts[i] <= w.end) {
          windows[n].add(t.kernels[i].start, t.kernels[i].end());
          break;
        }
  }
  for (const auto& [n, w] : windows)
    if (w.end > w.start) t.steps.push_back(KinetoStep{n, w.start, w.end});
  t.steps_annotated = !t.steps.empty();
  if (t.steps.empty()) {
    Window all;
    for (const KinetoKernel& k : t.kernels) all.add(k.start, k.end());
    t.steps.push_back(KinetoStep{0, all.start, all.end});
  }
}

}  // namespace

KinetoTrace parse_kineto_trace(const Json& j, const std::string& path) {
  auto events_it = j.is_object() ? j.find("traceEvents") : j.end();
  if (!j.is_object() || events_it == j.end() || !events_it->is_array())
    throw ConfigError(path, "not a Kineto trace: no \"traceEvents\" array",
                      "give the JSON file torch.profiler's export_chrome_trace wrote");
  KinetoTrace t;
  read_header(j, t);
  EventTables tables;
  read_events(*events_it, path, t, tables);
  if (t.kernels.empty())
    throw ConfigError(path, "no GPU kernels in the trace",
                      "profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]");
  const OpIndex index = sort_ops(t);
  const std::vector<sim::Time> launch_ts = link_kernels(t, tables, index);
  find_steps(t, tables, launch_ts);
  return t;
}

KinetoTrace load_kineto_trace(const std::string& file) {
  return parse_kineto_trace(models::presets::load_json_file(file, file), file);
}

}  // namespace trainsim::traces
