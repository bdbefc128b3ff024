#pragma once
// An nccl-tests-style sweep: one collective over a list of message sizes on a cluster, on the
// flow-level network (every transfer of the algorithm's plan as flows on the topology, each size
// on an idle network) or on the alpha-beta model. What `trainsim collective` prints; the choice
// of algorithm (NCCL-style auto, or a fixed one) and its checks live here, not in the CLI.

#include <cstdint>
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"
#include "models/collectives/nccl_tuning.hpp"
#include "models/hardware/cluster_spec.hpp"
#include "sim/units.hpp"

namespace trainsim::models::collectives {

struct SweepPoint {
  sim::Bytes size;
  sim::Time time;
  std::string algorithm;  // the algorithm that ran (auto's choice, or the fixed one)
};

struct Sweep {
  std::string fabric;  // topology builder (flow network); "" on the alpha-beta model
  int64_t nodes = 0;   // servers the GPUs span
  std::vector<SweepPoint> points;
};

// `algo`: a registered algorithm ("tree" is the double binary tree) or "auto". Throws
// ConfigError at --algo when the algorithm does not implement `op` or cannot run on these GPUs.
// `nccl` pins NCCL's protocol and channels (ConfigError at --protocol when the algorithm does not
// run it).
// `full`: every channel's flows (run_flow_collective's fast mode otherwise).
Sweep flow_sweep(const hardware::ClusterSpec& cluster, int64_t gpus, CollectiveOp op,
                 const std::vector<sim::Bytes>& sizes, const std::string& algo, const NcclOverrides& nccl = {},
                 bool full = false);

// `algo`: auto (the model's own choice per size), ring or tree (all-reduce across nodes only).
Sweep analytic_sweep(const hardware::ClusterSpec& cluster, int64_t gpus, CollectiveOp op,
                     const std::vector<sim::Bytes>& sizes, const std::string& algo, const NcclOverrides& nccl = {});

}  // namespace trainsim::models::collectives
