#pragma once
// Where a job sits on rack-scale NVLink domains: the job key `nvlink_segment` (docs/hardware.md).

#include "models/workload/job/job.hpp"

namespace trainsim::models::workload {

// On a cluster whose NVLink domain spans several nodes (an NVL72 rack of 4-GPU trays), sets the
// job's cluster.nvlink_domain to the GPUs it uses in each rack: `s.nvlink_segment`, checked to be
// whole nodes within the domain, or the automatic share. Nothing on other clusters.
void resolve_nvlink_segment(const JobSpec& s, Job& j);

}  // namespace trainsim::models::workload
