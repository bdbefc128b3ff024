#pragma once
// Replays a schedule's per-stage orders with fixed op durations, without an event queue: every
// stage runs its ops one after another in the given order; an op starts as soon as its stage is
// free and its input is done: F of virtual stage k after F of k-1 (same micro-batch), B of k
// after B of k+1, B of the last virtual stage after its own F (the loss, on whichever stage holds
// it), and W of (micro-batch, chunk) after the B of the same micro-batch and chunk. Schedule tests
// check bubbles and deadlock freedom with it; the planner's fast estimate prices a pipeline with
// it (planner/search/pipeline_cache.hpp).

#include <cstdint>
#include <string>
#include <vector>

#include "models/schedules/schedule.hpp"

namespace trainsim::models::schedules {

struct OpDurations {
  double f = 1.0, b = 2.0, w = 1.0;  // one F, B and W op of one chunk and micro-batch
};

struct Replay {
  bool deadlock = false;                    // some op could never start (a cross-stage cycle)
  std::string stuck;                        // the ops at the head of each stage when it deadlocked
  double makespan = 0;                      // end of the last op
  std::vector<double> busy;                 // per stage: time spent running ops
  std::vector<double> start;                // per stage: start of its first op (-1: no ops)
  std::vector<double> end;                  // per stage: end of its last op
  std::vector<std::vector<double>> op_end;  // [stage][position in its order]: when each op ends
};

Replay replay(const StageOrders& orders, int stages, int microbatches, int virtual_stages, const OpDurations& d,
              Placement placement = Placement::kLoop);

std::string describe(const Op& op);

}  // namespace trainsim::models::schedules
