#pragma once
// Test helper: models/schedules/replay.hpp in integer time units (F takes `f` units, B `b`, W `w`),
// plus order parsing and in-flight counting.
#include <cstdint>
#include <string>
#include <vector>

#include "models/schedules/replay.hpp"
#include "models/schedules/schedule.hpp"

namespace trainsim::models::schedules::pipeline {

struct Replay {
  bool deadlock = false;       // some op could never start (a cross-stage cycle)
  std::string stuck;           // the ops at the head of each stage when it deadlocked
  int64_t makespan = 0;        // end of the last op
  std::vector<int64_t> busy;   // per stage: time spent running ops
  std::vector<int64_t> start;  // per stage: start of its first op
  std::vector<int64_t> end;    // per stage: end of its last op
};

Replay replay(const StageOrders& orders, int p, int v, int64_t f = 1, int64_t b = 2, int64_t w = 1,
              Placement placement = Placement::kLoop);

// Replays a registered schedule's orders with its placement; split schedules take F = B = W = 1,
// the others F = 1 and B = 2 (the unsplit backward is the input and the weight gradient).
Replay replay(const ScheduleInfo& info, const StageOrders& orders, int p, int v);

// Peak running count of chunk activations alive on a stage: +1 at F, -1 at B, or at W when the
// schedule splits the weight gradient (activations then live until W).
int64_t peak_in_flight(const std::vector<Op>& order, bool splits_weight_grad = false);

std::string describe(const Op& op);

// Ops from text: space-separated tokens "<F|B|W><micro-batch>[c<chunk>]", e.g. "F0 F1 B0 W0 F2c1".
std::vector<Op> parse_order(const std::string& text);

}  // namespace trainsim::models::schedules::pipeline
