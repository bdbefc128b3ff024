#pragma once
// Faults as events of one simulated run (fault.hpp, docs/faults.md). At its time a link fault
// drops the link's capacity in the flow network (a dead link stalls the flows crossing it) and,
// for a dead link, the traffic reroutes `reroute_delay` later over the working links; a dead GPU
// stops the job at that instant; a slow GPU's compute tasks run slower from then on
// (SlowComputeRunner). Faults at time 0 are there from the start: their links were applied when
// the network was built (NetworkCommRunner). Fault events still pending when the last task
// finishes are cancelled, so they never stretch the run.

#include <cstdint>
#include <string>
#include <vector>

#include "models/workload/dag/workload.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/run/fault.hpp"
#include "sim/config/schema.hpp"
#include "sim/task/executor.hpp"

namespace trainsim::models::workload {

class NetworkCommRunner;
class SlowComputeRunner;

// What became of one fault in a run.
struct FaultOutcome {
  Fault fault;
  bool struck = false;                            // its time came before the run ended
  sim::Time rerouted_at = sim::Time::infinite();  // a dead link's traffic rerouted then
  std::string effect;                             // one line for reports
};

// The faults of a run and how the run ended.
struct FaultReport {
  std::vector<FaultOutcome> faults;
  bool completed = true;  // false: a fault stopped the job (a dead GPU, or GPUs cut apart)
  sim::Time stopped_at = sim::Time::infinite();
  std::string stop_reason;
  uint64_t tasks = 0, tasks_done = 0, compute_tasks = 0, compute_tasks_done = 0;
  sim::config::Json to_json() const;
};

class FaultInjector {
 public:
  // `network` is null without the flow network (then no link faults: check_faults), `slow` the
  // runner of compute tasks when some fault slows a GPU.
  FaultInjector(sim::task::TaskExecutor& exec, const Workload& w, const Job& job, std::vector<Fault> faults,
                NetworkCommRunner* network, SlowComputeRunner* slow);
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;
  // Schedules the faults; call before the executor runs.
  void arm();
  // After the run: what each fault did and how much of the iteration was done.
  FaultReport report() const;

 private:
  void strike(size_t k);
  void reroute(size_t k);
  void stop(const std::string& reason);
  void task_ended();

  sim::task::TaskExecutor& exec_;
  sim::Engine& engine_;
  const Workload& w_;
  const Job& job_;
  NetworkCommRunner* network_;
  SlowComputeRunner* slow_;
  std::vector<FaultOutcome> outcomes_;
  std::vector<sim::EventId> pending_;
  size_t ended_ = 0;
  bool stopped_ = false;
  sim::Time stopped_at_ = sim::Time::infinite();
  std::string stop_reason_;
};

}  // namespace trainsim::models::workload
