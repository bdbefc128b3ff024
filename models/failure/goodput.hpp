#pragma once
// The planner's goodput objective: the expected wall clock to train including failures and
// checkpoints, in closed form (Daly at his optimal interval, study.hpp closed_form_time), for
// every candidate plan of one cluster size. What differs between plans of one size is their
// iteration time (the failure-free compute), their checkpoint read at a restart (every
// data-parallel replica reads the weights unless the read is broadcast; ZeRO shards the optimizer
// read) and, for elastic runs, nothing in the closed form (the Monte Carlo of the chosen plan
// models it). Failures per hour are the same for every plan of a size: any failure stops a
// synchronous job.

#include <cstdint>

#include "models/failure/checkpoint.hpp"
#include "models/failure/profile.hpp"
#include "models/failure/study.hpp"
#include "models/workload/job/job.hpp"

namespace trainsim::models::failure {

class GoodputModel {
 public:
  // `hardware` is resolved for the cluster size (gpus set); options.tokens must be set.
  GoodputModel(const workload::Job& hardware, const FailureProfile& profile, const ReliabilityOptions& options);
  // Expected wall clock of a plan with dp data-parallel and cp context-parallel ranks, ZeRO
  // stage `zero`, taking `iteration` per iteration.
  sim::Time expected_time(int64_t dp, int64_t cp, int64_t zero, sim::Time iteration) const;
  // Failure-free compute at that iteration time.
  sim::Time ideal_time(sim::Time iteration) const;
  const ReliabilityModel& reference() const { return reference_; }

 private:
  workload::Job job_;
  ReliabilityOptions options_;
  ReliabilityModel reference_;  // built for dp = 1, zero = 0
  sim::Time recovery_without_read_;
  const CheckpointStrategyInfo* strategy_ = nullptr;
  sim::Bandwidth nic_per_gpu_;
};

}  // namespace trainsim::models::failure
