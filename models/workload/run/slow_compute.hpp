#pragma once
// Compute tasks on slow GPUs (gpu_slow faults, fault.hpp): a runner that stretches a compute
// task's remaining work by 1 / speed from the moment its GPU slows down, so a task that straddles
// the fault runs its first part at full speed. Tasks of other GPUs keep their exact duration.
//
// Representative fidelity simulates one rank per pipeline stage, standing for all its TP, CP and
// DP peers. Slowing that representative is the right model of one slow GPU of the stage: its TP
// group waits for it at every tensor-parallel collective, and every data-parallel replica waits
// for its gradients at the reduction, so the whole stage runs at the slow GPU's pace (as in
// synchronous training, the slowest member sets the step).

#include <cstdint>
#include <vector>

#include "models/workload/dag/workload.hpp"
#include "models/workload/job/job.hpp"
#include "sim/task/executor.hpp"

namespace trainsim::models::workload {

class SlowComputeRunner final : public sim::task::TaskRunner {
 public:
  explicit SlowComputeRunner(const Workload& w) : w_(w), slow_(w.ranks.size()) {}
  // From `at` on, the compute tasks of rank slot `slot` run at `speed` (0 < speed <= 1) times
  // their rate; with several slowdowns on one slot the slowest in force applies.
  void slow_down(uint32_t slot, double speed, sim::Time at);
  // The rank slots that simulate GPU `rank` (its stage's representative, or itself when every
  // rank is simulated).
  static std::vector<uint32_t> slots_of(const Workload& w, const Job& job, int32_t rank);

  void start(sim::task::TaskIndex i, const sim::task::Task& t, sim::task::TaskExecutor& exec) override;

  // When a task of `slot` needing `work` at full speed and starting at `start` ends.
  sim::Time end_time(uint32_t slot, sim::Time start, sim::Time work) const;

 private:
  struct Slowdown {
    sim::Time at;
    double speed;
  };
  const Workload& w_;
  std::vector<std::vector<Slowdown>> slow_;  // per rank slot, sorted by time
};

}  // namespace trainsim::models::workload
