#pragma once
// Runs an imported Chakra workload (chakra_workload.hpp) on its target cluster: compute, CPU
// and memory tasks take their fixed times, collectives and transfers run as flows on the
// cluster's topology (network "flow", the NetworkCommRunner every simulation uses) or take the
// alpha-beta model's time (network "analytic"). Reports the iteration time and, per rank, where
// it went.

#include <functional>
#include <optional>
#include <vector>

#include "models/workload/job/job.hpp"
#include "models/workload/run/run_workload.hpp"
#include "sim/config/schema.hpp"
#include "sim/flow/network.hpp"
#include "sim/task/executor.hpp"
#include "topology/fwd.hpp"
#include "traces/chakra/workload.hpp"

namespace trainsim::traces::chakra {

// One rank's iteration: GPU compute busy time, then the idle rest by what the rank waited on (a
// collective, a transfer, a host copy, CPU work, in that priority), else idle. Adds up to the
// iteration time.
struct RankTime {
  sim::Time compute, collective, transfer, memory, cpu, idle;
  sim::config::Json to_json() const;
};

struct ReplayResult {
  sim::Time iteration;
  std::vector<RankTime> ranks;
  uint64_t tasks = 0, events = 0;
  std::optional<models::workload::NetworkStats> network;  // network "flow"
  sim::config::Json to_json() const;                      // iteration_time_s, ranks, simulation
};

// As models::workload::SimulateOptions (run_workload.hpp): tracers attach before the run,
// recorders of flows once the network exists, writers after the run. The replay always runs at
// full fidelity (every rank is in the trace) and without faults.
using ReplayOptions = models::workload::RunOptions;

// `job` is the replay job (import_workload's): its cluster, GPU, gpus = ranks, network, seed.
ReplayResult replay(const ImportedWorkload& iw, const models::workload::Job& job, const ReplayOptions& options = {});

// Every rank's breakdown after a run that ended at `end` (a collective or transfer counts for
// all its ranks, the receiver included).
std::vector<RankTime> rank_times(const models::workload::Workload& w, const sim::task::TaskExecutor& exec,
                                 sim::Time end);

}  // namespace trainsim::traces::chakra
