#include "models/failure/goodput.hpp"

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
  reference_ = reliability_model(job_, count_components(job_), sim::Time::s(1), profile, options_, {});
  recovery_without_read_ = reference_.mean_recovery - reference_.checkpoint.restore;
}

double GoodputModel::ideal_seconds(double iteration_s) const {
  return *options_.tokens * iteration_s / static_cast<double>(job_.global_batch * job_.seq_len);
}

double GoodputModel::expected_seconds(int64_t dp, int64_t cp, int64_t zero, double iteration_s) const {
  ReliabilityModel m = reference_;
  CheckpointInput in = m.checkpoint_input;
  if (!options_.broadcast_restore) {
    const double params = job_.model.parameters(), replicas = static_cast<double>(dp * cp);
    in.restore_read =
        sim::Bytes(static_cast<int64_t>(zero >= 1 ? params * (12.0 + 2.0 * replicas) : params * 14.0 * replicas));
  } else {
    // The broadcast moves each GPU's share of the weights: 2 bytes x params x replicas / gpus.
    in.restore_extra = sim::Time::from_seconds_ceil(in.restore_extra.seconds() * static_cast<double>(dp * cp));
  }
  m.checkpoint =
      CheckpointRegistry::instance().get(options_.checkpoint, "--checkpoint", "checkpoint strategy").costs(in);
  m.mean_recovery = recovery_without_read_ + m.checkpoint.restore;
  m.iteration = sim::Time::from_seconds_ceil(iteration_s);
  m.config.work = sim::Time::from_seconds_ceil(ideal_seconds(iteration_s));
  return closed_form_time(m).seconds();
}

}  // namespace trainsim::models::failure
