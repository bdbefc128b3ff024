#pragma once
// Several iterations back to back with faults (trainsim simulate --iterations N --fault ...),
// simply and exactly: iterations before a fault's time take the time of the iteration without
// it; the iteration a fault falls in is simulated with the fault injected at its offset into it;
// later iterations are simulated with the fault there from the start (a dead link already routed
// around, a slow GPU slow throughout). A fault that stops the job ends the sequence there.
// Without faults, N iterations are N times one (the simulation is deterministic).

#include <cstdint>
#include <string>
#include <vector>

#include "models/workload/run/simulate.hpp"

namespace trainsim::models::workload {

inline constexpr int32_t kMaxIterations = 64;

struct IterationTime {
  sim::Time time;  // start to end, or to the stop
  bool completed = true;
  bool simulated = false;  // false: the same as an earlier simulated iteration (no fault in it)
  std::string note;        // "fault-free", "faults from the start", "link:a/b@2ms struck", ...
};

struct IterationsResult {
  int32_t requested = 1;
  sim::Time fault_free;                   // one iteration without any fault
  std::vector<IterationTime> iterations;  // fewer than requested when a fault stopped the job
  bool completed = true;
  // The iteration the first fault struck (the first iteration when none did): the detailed report.
  SimulationResult detail;
  int32_t detail_index = 0;
  sim::Time detail_start;          // when it began: the detail's fault times are offsets from here
  std::vector<Fault> not_reached;  // faults whose time lies past the last iteration
  sim::Time total() const;
  sim::config::Json to_json() const;
};

// `iterations` in [1, kMaxIterations] (ConfigError at "--iterations" otherwise). The options'
// hooks run for every iteration simulated. A plan that does not fit returns detail.fits = false
// and no iterations.
IterationsResult simulate_iterations(const Job& job, const SimulateOptions& options, int32_t iterations);

}  // namespace trainsim::models::workload
