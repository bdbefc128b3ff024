#include "models/failure/stragglers.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "models/workload/run/fault.hpp"

namespace trainsim::models::failure {

StragglerSlowdowns straggler_slowdowns(const workload::Job& job, const workload::SimulationResult& base,
                                       const FailureProfile& profile) {
  StragglerSlowdowns s;
  const double t0 = base.iteration.seconds();
  // The slow GPU sits in a random stage. How much a stage's slowness shows depends on where it is
  // (the last stage of 1F1B has no slack, earlier ones hide part of it in the pipeline's), so
  // the first, the busiest and the last stage are re-simulated, weighted 1/pp, (pp-2)/pp, 1/pp.
  const int64_t pp = job.pp;
  std::vector<std::pair<int32_t, double>> stages;  // stage, weight
  if (pp == 1) {
    stages = {{0, 1.0}};
  } else {
    const double end = 1.0 / static_cast<double>(pp), mid = 1.0 - 2.0 * end;
    stages = {{0, end}, {static_cast<int32_t>(pp - 1), end}};
    if (mid > 0) stages.push_back({base.critical_stage, mid});
  }
  double slowdown = 0;
  for (const auto& [stage, weight] : stages) {
    workload::SimulateOptions slow;
    slow.faults = {workload::Fault::slow_gpu(base.stages[static_cast<size_t>(stage)].rank, profile.slow_gpu.factor)};
    slowdown += weight * std::max(1.0, workload::simulate(job, slow).iteration.seconds() / t0);
  }
  s.slow_gpu = slowdown;
  const int32_t rank = base.stages[static_cast<size_t>(base.critical_stage)].rank;
  // A job inside one server never uses its links into the fabric.
  if (job.gpus <= job.cluster.gpus_per_node) return s;
  workload::Job flow = job;
  double t_flow = t0;
  if (job.network != workload::Network::kFlow) {
    flow.network = workload::Network::kFlow;
    t_flow = workload::simulate(flow).iteration.seconds();
  }
  workload::SimulateOptions link;
  link.faults = {workload::Fault::degraded_uplink(rank, profile.slow_link.factor)};
  s.slow_link = std::max(1.0, workload::simulate(flow, link).iteration.seconds() / t_flow);
  return s;
}

}  // namespace trainsim::models::failure
