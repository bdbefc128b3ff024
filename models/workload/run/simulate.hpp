#pragma once
// One training iteration of a Job, simulated end to end: memory check, task DAG, discrete-event
// run, and the report (time, throughput, FLOP rates, breakdown, per-stage memory).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/memory/footprint.hpp"
#include "models/workload/dag/workload.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/job/prediction_band.hpp"
#include "models/workload/run/breakdown.hpp"
#include "models/workload/run/fault.hpp"
#include "models/workload/run/fault_injector.hpp"
#include "models/workload/run/run_workload.hpp"
#include "sim/error.hpp"
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

struct SimulationResult {
  Job job;
  bool fits = true;
  bool simulated = false;
  bool over_budget =
      false;            // SimulateOptions::event_limit or solver_limit ran out first: not simulated, no iteration time
  sim::Bytes capacity;  // usable device memory (capacity - reserved)
  // Host memory per GPU the offloads may use (the cluster's host_memory; 0: not checked).
  sim::Bytes host_capacity;
  std::vector<StageReport> stages;
  int32_t worst_memory_stage = 0;
  int32_t critical_stage = 0;  // stage with the most compute: its breakdown is the headline
  sim::Time iteration;
  double tokens_per_s = 0, model_flops = 0, model_tflops_per_gpu = 0, mfu = 0, hardware_tflops_per_gpu = 0;
  uint64_t tasks = 0, events = 0, simulated_ranks = 0;
  PredictionBand band;                  // how far to trust the iteration time (prediction_band.hpp)
  std::optional<NetworkStats> network;  // set when communication ran on the flow network
  // Set when SimulateOptions::faults is not empty: what each fault did, and whether the
  // iteration completed. A run a fault stopped has `iteration` = the stop time and no throughput
  // or breakdown (zeros).
  std::optional<FaultReport> faults;
  bool completed() const { return !faults || faults->completed; }
  sim::Bytes peak_memory() const;
  // The most host memory a stage's offloads use per GPU (StageMemory::host), and whether every
  // stage's fits the host (always when host_capacity is 0).
  sim::Bytes peak_host_memory() const;
  bool host_fits() const { return job.cluster.holds_on_host(peak_host_memory()); }
  // Whether one stage fits: the device's usable memory and, for its offloads, the host's.
  bool stage_fits(const memory::StageMemory& m) const {
    return m.total() <= capacity && job.cluster.holds_on_host(m.host);
  }
  sim::config::Json to_json() const;
};

// How to run it (run_workload.hpp): fidelity, recorders' hooks, reused durations, faults.
// Re-simulating a degraded component, e.g. for a slowdown:
//   opt.faults = {Fault::slow_gpu(rank, 0.5)};  or  {Fault::degraded_uplink(rank, 0.25)};
//   simulate(job, opt).iteration / simulate(job).iteration.
using SimulateOptions = RunOptions;

// Never throws for a plan that does not fit: returns fits = false with the memory breakdown and
// leaves the iteration unsimulated. Throws ConfigError for bad jobs.
SimulationResult simulate(const Job& job, const SimulateOptions& options = {});

// The one-line error for a result that does not fit (fits == false): the stage that needs the
// most, what it needs, what is usable and by how much it is over; `hint` says what to change in
// the caller's own terms (flags for the CLI, knobs for the viewer).
PlanError does_not_fit_error(const SimulationResult& result, const std::string& hint);

// Memory per stage from the schedule alone (no simulation).
std::vector<StageReport> stage_memory_reports(const Job& job);

}  // namespace trainsim::models::workload
