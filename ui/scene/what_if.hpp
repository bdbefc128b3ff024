#pragma once
// The what-if panel's knobs applied to a job: tensor and pipeline parallel sizes, virtual stages,
// micro-batch, pipeline schedule, and each network's bandwidth as a multiple of the cluster's.
// The data-parallel size follows from the GPU count; everything else (ZeRO, recompute, CP, EP...)
// stays the base job's, which is the job as given or a plan picked in the plans view.

#include <string>

#include "models/workload/job/job.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::ui {

struct WhatIf {
  int64_t tp = 1, pp = 1, vp = 1, micro_batch = 1;
  std::string schedule = "1f1b";
  double inter_node_bandwidth = 1.0;  // x the cluster's NIC bandwidth (scale-out network)
  double intra_node_bandwidth = 1.0;  // x the cluster's NVLink bandwidth (scale-up network)
  friend bool operator==(const WhatIf&, const WhatIf&) = default;
};

// What the knobs change: the job's spec (parallel fields) over its resolved hardware.
struct WhatIfBase {
  models::workload::JobSpec spec;
  models::workload::Job hardware;  // resolve_hardware(spec)
};
WhatIfBase what_if_base(const sim::config::Json& job_json);

// The knobs as a resolved job has them (multipliers 1).
WhatIf what_if_of(const models::workload::Job& job);

// The base job with the knobs set, resolved. A TP other than the base's resets expert TP to TP,
// and turns sequence parallelism on when the base had TP 1 (a plan at TP 1 has it off). The multipliers scale the
// cluster's nic_bandwidth / nvlink_bandwidth and the "*bandwidth" fields of an explicit cluster.network ("nvlink_*" by
// the scale-up one, the others by the scale-out one). Throws ConfigError naming the field for a combination the job's
// rules reject (e.g. "tp: must divide the model's 64 heads").
models::workload::Job apply_what_if(const WhatIfBase& base, const WhatIf& w);

}  // namespace trainsim::ui
