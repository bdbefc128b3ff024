#pragma once
// The one run driver: a built Workload on a discrete-event engine, with its communication on the
// flow network (job.network "flow") or priced by the alpha-beta model, and the faults injected
// into it. simulate() (one iteration of a Job), the Chakra replay (an imported workload) and the
// viewer all run through it; what differs is what they read from the run (RunView) and which
// recorders they attach (RunHooks; traces/sinks/recorders.hpp attaches the trace, link and
// memory recorders).

#include <functional>
#include <optional>
#include <vector>

#include "models/workload/dag/workload.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/run/fault.hpp"
#include "models/workload/run/fault_injector.hpp"
#include "sim/engine.hpp"
#include "sim/flow/network.hpp"
#include "sim/task/executor.hpp"
#include "topology/fwd.hpp"

namespace trainsim::models::workload {

// What the flow-level network did (network = "flow").
struct NetworkStats {
  std::string topology;  // builder name
  size_t links = 0;      // directed links
  uint64_t collectives = 0, transfers = 0, flows = 0, solves = 0, flows_solved = 0;
  uint64_t memoized = 0,
           memo_overlaps = 0;         // collectives that reused a measured duration; reused ones turned into flows
  sim::config::Json to_json() const;  // the reports' "simulation.network" object
};
class NetworkCommRunner;
// What a run's flow network did (after the run).
NetworkStats network_stats(const NetworkCommRunner& runner);

// Observers of a run, each optional.
struct RunHooks {
  // Called after the DAG is built and before the engine runs (attach tracers here).
  std::function<void(sim::Engine&, const Workload&)> before_run;
  // Called after the run while the executor is alive.
  std::function<void(const Workload&, const sim::task::TaskExecutor&)> after_run;
  // Called once the flow network is built (network = "flow"), before the run: attach flow and
  // link recorders here.
  std::function<void(sim::flow::FlowNetwork&, const topology::Topology&)> on_network;
};

struct RunOptions : RunHooks {
  Fidelity fidelity = Fidelity::kRepresentative;
  // Collectives alone on their links reuse a measured duration instead of running as flows
  // (network_runner.hpp); recorders that must see every flow turn this off.
  bool reuse_durations = true;
  // All-to-alls stand rank 0's transfers for every rank's, rings channel 0 for every channel
  // (network_runner.hpp); off runs them all.
  bool symmetric_rotations = true;
  // Threads that find the flow network's routes before the run (0: the machine's hardware
  // threads); the planner, which simulates plans on its own threads, uses 1. Results do not
  // depend on it.
  int route_threads = 0;
  // Work budget in engine events (0: none): a run that needs more stops there, over_budget set.
  uint64_t event_limit = 0;
  // Work budget of the flow network's max-min solver, in flows solved over all re-solves (0:
  // none): a few large components re-solved at every event cost far more than their events.
  uint64_t solver_limit = 0;
  // Faults injected into the run (fault.hpp, docs/faults.md), at their time into it; at time 0
  // they are there from the start. Throws ConfigError when a fault does not fit the job.
  std::vector<Fault> faults;
};

// What a finished run offers its caller, valid only inside the `inspect` callback.
struct RunView {
  const Workload& workload;
  const sim::Engine& engine;
  const sim::task::TaskExecutor& exec;
  sim::Time end;                        // when the last task finished (or a fault stopped the run)
  std::optional<NetworkStats> network;  // set when communication ran on the flow network
  std::optional<FaultReport> faults;    // set when options.faults is not empty
  bool over_budget = false;             // stopped by RunOptions::event_limit or solver_limit
};

// Runs `w` for `job` (its network, seed and cluster). `prepare` runs before the engine starts
// (after options.before_run), `inspect` after the run while the executor is alive (before
// options.after_run). Throws ConfigError for faults that do not fit the job.
void run_workload(const Workload& w, const Job& job, const RunOptions& options,
                  const std::function<void(sim::Engine&)>& prepare, const std::function<void(const RunView&)>& inspect);

}  // namespace trainsim::models::workload
