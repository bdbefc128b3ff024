#include "ui/scene/what_if.hpp"

#include <cstdio>

#include "sim/error.hpp"
#include "sim/units.hpp"

namespace trainsim::ui {

using sim::config::Json;

WhatIfBase what_if_base(const Json& job_json) {
  WhatIfBase b;
  b.spec = models::workload::parse_job(job_json);
  b.hardware = models::workload::resolve_hardware(b.spec);
  return b;
}

WhatIf what_if_of(const models::workload::Job& job) {
  WhatIf w;
  w.tp = job.tp;
  w.pp = job.pp;
  w.vp = job.vp;
  w.micro_batch = job.micro_batch;
  w.schedule = job.schedule;
  return w;
}

namespace {

std::string scaled(const std::string& text, double factor, const std::string& path) {
  const sim::Bandwidth b = sim::parse_bandwidth(text, path);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9gGBps", b.gbyte_per_second() * factor);
  return buf;
}

}  // namespace

models::workload::Job apply_what_if(const WhatIfBase& base, const WhatIf& w) {
  if (!(w.inter_node_bandwidth > 0) || !(w.intra_node_bandwidth > 0))
    throw ConfigError("bandwidth", "must be a positive multiple", "use a multiple such as 0.5 or 2");
  models::workload::JobSpec spec = base.spec;
  // A layer layout is for one pipeline shape: another shape splits evenly.
  if (spec.pp != w.pp || spec.vp != w.vp) spec.pp_layout.clear();
  // A picked plan pins expert TP and sequence parallelism for its own TP (sp off at TP 1): a new
  // TP takes expert TP = TP and, from TP 1, sequence parallelism (Megatron's default with TP).
  if (spec.tp != w.tp) {
    spec.etp.reset();
    if (spec.tp == 1) spec.sp = true;
  }
  spec.tp = w.tp;
  spec.pp = w.pp;
  spec.vp = w.vp;
  spec.micro_batch = w.micro_batch;
  spec.schedule = w.schedule;
  spec.dp.reset();  // follows from gpus / (tp x cp x pp)
  models::workload::Job job = base.hardware;
  models::workload::resolve_parallel(spec, job);
  job.cluster.nic_bandwidth = job.cluster.nic_bandwidth * w.inter_node_bandwidth;
  job.cluster.nvlink_bandwidth = job.cluster.nvlink_bandwidth * w.intra_node_bandwidth;
  if (job.cluster.network.is_object()) {
    for (auto& [key, value] : job.cluster.network.items()) {
      if (!value.is_string() || key.size() < 9 || key.compare(key.size() - 9, 9, "bandwidth") != 0) continue;
      const double f = key.rfind("nvlink", 0) == 0 ? w.intra_node_bandwidth : w.inter_node_bandwidth;
      value = scaled(value.get<std::string>(), f, "cluster.network." + key);
    }
  }
  return job;
}

}  // namespace trainsim::ui
