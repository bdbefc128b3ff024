#include "models/workload/job/rack_placement.hpp"

#include <algorithm>
#include <string>

#include "sim/error.hpp"

namespace trainsim::models::workload {

// On a cluster whose NVLink domain spans several nodes (an NVL72 rack of 4-GPU trays) a job places
// its ranks on `nvlink_segment` GPUs of each rack, as Slurm's --segment does: the job's fabric then
// has domains of that many GPUs (the rest of each rack is not the job's).
void resolve_nvlink_segment(const JobSpec& s, Job& j) {
  const int64_t domain = j.cluster.domain_gpus(), host = std::max<int64_t>(1, j.cluster.gpus_per_node);
  if (domain <= host) return;
  if (s.nvlink_segment) {
    const int64_t seg = *s.nvlink_segment;
    if (seg > domain || seg % host != 0)
      throw ConfigError("nvlink_segment",
                        std::to_string(seg) + " GPUs is not a whole number of " + std::to_string(host) +
                            "-GPU nodes within the " + std::to_string(domain) + "-GPU NVLink domain",
                        "use a multiple of " + std::to_string(host) + " up to " + std::to_string(domain) +
                            ", or drop --nvlink-segment");
    j.cluster.nvlink_domain = seg;
    return;
  }
  // Auto: a job that fits one domain packs it; a larger one uses the largest whole-node share of
  // each rack, at least half of it, that divides its GPUs (256 GPUs: 4 racks of 64, as a Slurm
  // --segment of 16 trays places them); with none, racks are filled in rank order.
  if (j.gpus <= domain) return;
  for (int64_t c = domain / host * host; c * 2 >= domain; c -= host)
    if (j.gpus % c == 0) {
      j.cluster.nvlink_domain = c;
      return;
    }
}

}  // namespace trainsim::models::workload
