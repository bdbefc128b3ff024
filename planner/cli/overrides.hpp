#pragma once
// What-if overrides: `--override cluster.nic_bandwidth=800Gbps` or `--override gpu.memory=141GiB`
// replace one field of the job's cluster or GPU. The preset (or file) becomes an inline object
// with the field set; resolve_job then parses it through the cluster / GPU schema as usual, so a
// bad value is reported at its field (cluster.nic_bandwidth) and an unknown field here.

#include <string>
#include <vector>

#include "sim/config/schema.hpp"

namespace trainsim::planner::cli {

// Returns `job` (merged job JSON) with the overrides applied, in order. Throws ConfigError at
// "--override" for a malformed item or a field the cluster / GPU schema does not have.
sim::config::Json apply_overrides(sim::config::Json job, const std::vector<std::string>& overrides);

}  // namespace trainsim::planner::cli
