#pragma once
// One training iteration of a Job, simulated end to end: memory check, task DAG, discrete-event
// run, and the report (time, throughput, FLOP rates, breakdown, per-stage memory).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/memory/footprint.hpp"
#include "models/workload/build/workload.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/run/breakdown.hpp"
#include "models/workload/run/fault.hpp"
#include "models/workload/run/fault_injector.hpp"
#include "sim/flow/network.hpp"
#include "topology/fwd.hpp"

namespace trainsim::models::workload {

struct StageReport {
  int32_t stage = 0;
  int32_t rank = 0;            // representative global rank
  int64_t peak_in_flight = 0;  // micro-batch chunks alive at once (from the schedule)
  memory::StageMemory memory;
  TimeBreakdown time;  // filled when simulated
};

// What the flow-level network did (network = "flow").
struct NetworkStats {
  std::string topology;  // builder name
  size_t links = 0;      // directed links
  uint64_t collectives = 0, transfers = 0, flows = 0, solves = 0, flows_solved = 0;
  uint64_t memoized = 0, memo_overlaps = 0;  // private collectives that reused a measured duration
  sim::config::Json to_json() const;         // the reports' "simulation.network" object
};
class NetworkCommRunner;
// What a run's flow network did (after the run).
NetworkStats network_stats(const NetworkCommRunner& runner);

struct SimulationResult {
  Job job;
  bool fits = true;
  bool simulated = false;
  sim::Bytes capacity;  // usable device memory (capacity - reserved)
  std::vector<StageReport> stages;
  int32_t worst_memory_stage = 0;
  int32_t critical_stage = 0;  // stage with the most compute: its breakdown is the headline
  sim::Time iteration;
  double tokens_per_s = 0, model_flops = 0, model_tflops_per_gpu = 0, mfu = 0, hardware_tflops_per_gpu = 0;
  uint64_t tasks = 0, events = 0, simulated_ranks = 0;
  std::optional<NetworkStats> network;  // set when communication ran on the flow network
  // Set when SimulateOptions::faults is not empty: what each fault did, and whether the
  // iteration completed. A run a fault stopped has `iteration` = the stop time and no throughput
  // or breakdown (zeros).
  std::optional<FaultReport> faults;
  bool completed() const { return !faults || faults->completed; }
  sim::Bytes peak_memory() const;
  sim::config::Json to_json() const;
};

struct SimulateOptions {
  Fidelity fidelity = Fidelity::kRepresentative;
  // Called after the DAG is built and before the engine runs (attach tracers here).
  std::function<void(sim::Engine&, const Workload&)> before_run;
  // Called after the run while the executor is alive.
  std::function<void(const Workload&, const sim::task::TaskExecutor&)> after_run;
  // Called once the flow network is built (network = "flow"), before the run: attach flow and
  // link recorders here.
  std::function<void(sim::flow::FlowNetwork&, const topology::Topology&)> on_network;
  // Private collectives reuse a measured duration instead of running as flows (network_runner.hpp);
  // recorders that must see every flow turn this off.
  bool reuse_private_durations = true;
  // Faults injected into the run (fault.hpp, docs/faults.md), at their time into it; at time 0
  // they are there from the start. Re-simulating a degraded component, e.g. for a slowdown:
  //   opt.faults = {Fault::slow_gpu(rank, 0.5)};  or  {Fault::degraded_uplink(rank, 0.25)};
  //   simulate(job, opt).iteration / simulate(job).iteration.
  // Throws ConfigError when a fault does not fit the job (check_faults).
  std::vector<Fault> faults;
};

// Never throws for a plan that does not fit: returns fits = false with the memory breakdown and
// leaves the iteration unsimulated. Throws ConfigError for bad jobs.
SimulationResult simulate(const Job& job, const SimulateOptions& options = {});

// Memory per stage from the schedule alone (no simulation).
std::vector<StageReport> stage_memory_reports(const Job& job);

}  // namespace trainsim::models::workload
