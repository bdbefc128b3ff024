#pragma once
// Test helper: replays a schedule's per-stage orders without an event queue. Every stage runs its
// ops one after another in the given order; an op starts as soon as its stage is free and its
// cross-stage input is done: F of virtual stage k after F of k-1 (same micro-batch), B of k after
// B of k+1, and B of the last virtual stage after its own F (the loss). Virtual stage of chunk c
// on stage s: c * p + s (Megatron's interleaved placement). F takes `f` time units, B `b`.
#include <cstdint>
#include <string>
#include <vector>

#include "models/schedules/schedule.hpp"

namespace trainsim::models::schedules::pipeline {

struct Replay {
  bool deadlock = false;      // some op could never start (a cross-stage cycle)
  std::string stuck;          // the ops at the head of each stage when it deadlocked
  int64_t makespan = 0;       // end of the last op
  std::vector<int64_t> busy;  // per stage: time spent running ops
  std::vector<int64_t> end;   // per stage: end of its last op
};

Replay replay(const StageOrders& orders, int p, int v, int64_t f = 1, int64_t b = 2);

// Running count of F minus B over a stage's order: chunks whose activations are alive at once.
int64_t peak_in_flight(const std::vector<Op>& order);

std::string describe(const Op& op);

}  // namespace trainsim::models::schedules::pipeline
