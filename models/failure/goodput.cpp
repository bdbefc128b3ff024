#include "models/failure/goodput.hpp"

#include <algorithm>

#include "models/failure/inventory.hpp"

namespace trainsim::models::failure {

GoodputModel::GoodputModel(const workload::Job& hardware, const FailureProfile& profile,
                           const ReliabilityOptions& options)
    : job_(hardware), options_(options) {
  if (!options_.tokens) throw ConfigError("--tokens", "is required for the goodput objective", "pass --tokens 15T");
  options_.interval.reset();
  job_.dp = 1;
  job_.cp = 1;
  job_.zero = 0;
  // Neutral stragglers: their cost is nearly the same for every plan of a size; the study of the
  // chosen plan re-simulates them.
  // Any iteration time will do for the reference: expected_time replaces it.
  reference_ = reliability_model(job_, count_components(job_), sim::Time::s(1), profile, options_, {});
  recovery_without_read_ = reference_.mean_recovery - reference_.checkpoint.restore;
  strategy_ = &CheckpointRegistry::instance().get(options_.checkpoint, "--checkpoint");
  const int64_t gpn = std::max<int64_t>(1, job_.cluster.gpus_per_node);
  nic_per_gpu_ =
      job_.cluster.nic_bandwidth * (static_cast<double>(job_.cluster.nics_per_node) / static_cast<double>(gpn));
}

sim::Time GoodputModel::ideal_time(sim::Time iteration) const {
  return sim::Time::from_seconds_ceil(*options_.tokens * iteration.seconds() /
                                      static_cast<double>(job_.global_batch * job_.seq_len));
}

sim::Time GoodputModel::expected_time(int64_t dp, int64_t cp, int64_t zero, sim::Time iteration) const {
  ReliabilityModel m = reference_;
  CheckpointInput in = m.checkpoint_input;
  // The planner does not search HSDP: ZeRO shards over the whole dp x cp group.
  const RestoreTraffic r = restore_traffic(job_.model.parameters(), job_.gpus, dp * cp, dp * cp, zero,
                                           options_.broadcast_restore, nic_per_gpu_);
  in.restore_read = r.read;
  in.restore_extra = r.broadcast;
  m.checkpoint = strategy_->costs(in);
  m.mean_recovery = recovery_without_read_ + m.checkpoint.restore;
  m.iteration = iteration;
  m.config.work = ideal_time(iteration);
  return closed_form_time(m);
}

}  // namespace trainsim::models::failure
