#include "traces/kineto/compare.hpp"

#include <algorithm>
#include <sstream>
#include <utility>

#include "sim/error.hpp"
#include "traces/kineto/devices.hpp"
#include "traces/kineto/export.hpp"
#include "traces/kineto/ops.hpp"

namespace trainsim::traces {

using sim::config::Json;

namespace {

using Span = std::pair<int64_t, int64_t>;  // [start, end) in ns

// Merges spans in place into disjoint sorted ones.
void merge(std::vector<Span>& v) {
  std::sort(v.begin(), v.end());
  size_t out = 0;
  for (const Span& s : v) {
    if (out > 0 && s.first <= v[out - 1].second)
      v[out - 1].second = std::max(v[out - 1].second, s.second);
    else
      v[out++] = s;
  }
  v.resize(out);
}

int64_t length(const std::vector<Span>& merged) {
  int64_t sum = 0;
  for (const Span& s : merged) sum += s.second - s.first;
  return sum;
}

double seconds(sim::Time t) { return t.seconds(); }

Json summary_json(const TimelineSummary& s) {
  Json comm = Json::object();
  for (const auto& [kind, t] : s.comm) comm[kind] = seconds(t);
  return Json{{"steps", s.steps},
              {"step_s", seconds(s.step)},
              {"compute_s", seconds(s.compute)},
              {"comm_s", comm},
              {"comm_total_s", seconds(s.comm_total)},
              {"exposed_comm_s", seconds(s.exposed_comm)},
              {"idle_s", seconds(s.idle)}};
}

}  // namespace

TimelineSummary summarize_timeline(const KinetoTrace& trace) {
  TimelineSummary out;
  std::map<std::string, int64_t> comm;
  int64_t step = 0, compute = 0, comm_total = 0, exposed = 0, idle = 0;
  for (const KinetoStep& st : trace.steps) {
    const int64_t s = st.start.count_ns(), e = st.end.count_ns();
    std::vector<Span> comp, all_comm;
    std::map<std::string, std::vector<Span>> by_kind;
    for (const KinetoKernel& k : trace.kernels) {
      const int64_t a = std::max(s, k.start.count_ns()), b = std::min(e, k.end().count_ns());
      if (b <= a) continue;
      if (is_communication(k)) {
        all_comm.emplace_back(a, b);
        by_kind[collective_kind(k)].emplace_back(a, b);
      } else {
        comp.emplace_back(a, b);
      }
    }
    std::vector<Span> all = comp;
    all.insert(all.end(), all_comm.begin(), all_comm.end());
    merge(comp);
    merge(all_comm);
    merge(all);
    step += e - s;
    compute += length(comp);
    comm_total += length(all_comm);
    exposed += length(all) - length(comp);
    idle += (e - s) - length(all);
    for (auto& [kind, v] : by_kind) {
      merge(v);
      comm[kind] += length(v);
    }
  }
  const auto n = static_cast<int64_t>(trace.steps.size());
  out.steps = static_cast<int>(n);
  out.step = sim::Time::ns(step / n);
  out.compute = sim::Time::ns(compute / n);
  out.comm_total = sim::Time::ns(comm_total / n);
  out.exposed_comm = sim::Time::ns(exposed / n);
  out.idle = sim::Time::ns(idle / n);
  for (const auto& [kind, t] : comm) out.comm[kind] = sim::Time::ns(t / n);
  return out;
}

std::vector<OpComparison> top_ops(const KinetoTrace& trace, const models::hardware::GpuSpec& gpu, size_t n) {
  std::map<std::string, OpComparison> by_key;
  std::map<std::string, bool> unpriced;
  for (const KinetoOp& op : trace.ops) {
    if (op.kernels.empty()) continue;
    const OpInfo info = classify_op(op, trace);
    std::string key = op_key(op);
    if (info.cls == OpClass::kCollective) {  // NCCL: the collective, its size and group, not the (empty) dims
      const KinetoKernel& k = trace.kernels[static_cast<size_t>(op.kernels.front())];
      std::ostringstream os;
      os << op.name << " " << collective_kind(k) << " (" << k.in_nelems << " elements in, group " << k.group_size
         << ")";
      key = os.str();
    }
    OpComparison& c = by_key[key];
    c.key = key;
    c.cls = to_string(info.cls);
    ++c.count;
    for (int32_t k : op.kernels) c.measured += trace.kernels[static_cast<size_t>(k)].duration;
    const std::optional<sim::Time> p = predict_op(info, static_cast<int>(op.kernels.size()), gpu);
    if (!p) unpriced[key] = true;
    c.predicted = c.predicted.value_or(sim::Time::zero()) + p.value_or(sim::Time::zero());
  }
  std::vector<OpComparison> out;
  for (auto& [key, c] : by_key) {
    if (unpriced.count(key)) c.predicted.reset();
    out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const OpComparison& a, const OpComparison& b) { return a.measured > b.measured; });
  if (out.size() > n) out.resize(n);
  return out;
}

KinetoComparison compare_kineto(const KinetoTrace& trace, const std::string& file, const models::workload::Job& job,
                                size_t top) {
  if (trace.world_size != job.gpus) {
    std::ostringstream msg, hint;
    msg << "the trace is rank " << trace.rank << " of " << trace.world_size << " GPUs but the job has " << job.gpus;
    hint << "describe the traced job: --gpus " << trace.world_size;
    throw ConfigError("--gpus", msg.str(), hint.str());
  }
  const std::string preset = gpu_preset_for_device(trace.device_name, trace.device_memory);
  if (!preset.empty() && preset != job.gpu.name)
    throw ConfigError(
        "--gpu",
        "the trace ran on " + trace.device_name + " (preset " + preset + ") but the job's GPU is " + job.gpu.name,
        "pass --gpu " + preset + ", or a cluster of " + preset + " GPUs");
  KinetoComparison out;
  out.trace = file;
  out.device = trace.device_name;
  out.rank = trace.rank;
  out.world_size = trace.world_size;
  out.real = summarize_timeline(trace);
  out.simulated_trace = parse_kineto_trace(export_kineto(job, trace.rank), "simulated iteration");
  out.simulated = summarize_timeline(out.simulated_trace);
  out.ops = top_ops(trace, job.gpu, top);
  return out;
}

Json KinetoComparison::to_json() const {
  Json ops_json = Json::array();
  for (const OpComparison& o : ops) {
    Json e = {{"op", o.key}, {"class", o.cls}, {"count", o.count}, {"measured_s", seconds(o.measured)}};
    e["predicted_s"] = o.predicted ? Json(seconds(*o.predicted)) : Json();
    ops_json.push_back(e);
  }
  const double err = real.step.count_ns() > 0 ? simulated.step.seconds() / real.step.seconds() - 1.0 : 0.0;
  return Json{{"schema_version", 1},
              {"trace", trace},
              {"device", device},
              {"rank", rank},
              {"world_size", world_size},
              {"real", summary_json(real)},
              {"simulated", summary_json(simulated)},
              {"step_error", err},
              {"top_ops", ops_json}};
}

}  // namespace trainsim::traces
