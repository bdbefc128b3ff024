#pragma once
// Estimator::Pass, estimate()'s working state, shared by the estimator's files (estimator.cpp:
// layers, stages, pipeline; estimator_dp.cpp: gradient reduction and the optimizer step).

#include "planner/search/estimator.hpp"

namespace trainsim::planner::search {

// estimate()'s working state: the resolved candidate, its layer times, and what each phase
// derives for the next.
struct Estimator::Pass {
  const models::workload::Job& j;
  const LayerTimes& L;
  const models::schedules::ScheduleInfo& sched;
  uint8_t schedule = 0;
  int64_t gpn = 0;
  double mbs = 0;
  bool split = false;
  // One layer on the critical rank (layer_ops, zero3_ops).
  double moe_share = 0, f_layer = 0, dgrad = 0, wgrad = 0, b_layer = 0, w_layer = 0, zero3 = 0;
  double f_recompute = 0;         // a layer's forward as full recompute redoes it
  double copy_f = 0, copy_b = 0;  // FSDP2's copy-out of a layer's gathered weights, forward and backward
  double copy_edge = 0;           // and of the embedding's or LM head's, per gather
  int grad_elem = 4;
  models::collectives::GroupPlacement shard{}, grad_group{}, replica{};
  // The slowest stage's chunk op times (stage_ops).
  double f = 0, b = 0, w = 0, n = 0, recomputed = 0, hop = 0;
  int64_t first_stage = 0, last_stage = 0;
  // The pipeline (pipeline).
  int v = 1;
  double edge = 0, fill = 0, pipe = 0, busy = 0;
  PipelineCache::Timing timing{};
  // Gradient reduction and optimizer step (grad_reduction, optimizer_step).
  double params = 0, expert_params = 0, dense_params = 0, dp_exposed = 0, opt = 0;

  // A layer's time with the MoE share of layers' MLP block replacing the dense one.
  double mix(double dense, double dense_mlp, double moe) const { return dense + moe_share * (moe - dense_mlp); }
};

}  // namespace trainsim::planner::search
