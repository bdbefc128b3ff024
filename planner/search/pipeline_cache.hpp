#pragma once
// What the fast estimate needs from a pipeline schedule, computed once per shape (schedule,
// stages, micro-batches, chunks) and reused by every candidate of that shape:
//  - activation peaks: per stage, the Pareto-maximal counts (chunks alive of the middle virtual
//    stages, of the first virtual stage, of the last) over the stage's order, so that the peak
//    bytes for any non-negative per-chunk sizes are an exact maximum over a handful of points when
//    the middle virtual stages all have the same size (dense models with the planner's layouts);
//  - the makespan for given F, B and W op times, replayed (models/schedules/replay.hpp) with the
//    ratios B/F and W/F rounded to 1/32 and cached.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "models/schedules/replay.hpp"
#include "models/schedules/schedule.hpp"

namespace trainsim::planner::search {

struct PipelineShape {
  models::schedules::StageOrders orders;
  // [stage] -> points (alive chunks of middle virtual stages, of the first virtual stage, of the last).
  std::vector<std::vector<std::array<int32_t, 3>>> activation_points;
  int32_t busiest_middle_stage = -1;  // stage holding neither end with the most chunks alive (-1: none)
};

class PipelineCache {
 public:
  const PipelineShape& shape(uint8_t schedule, int p, int m, int v);
  // One iteration's pipeline for op times f, b, w (w = 0 unless the schedule splits weight
  // gradients), in seconds: the makespan, and on stage 0 (the embedding side, last to finish its
  // backward) when its compute ends and when each chunk's gradients are final (its last B, or W
  // for split schedules), earliest first: when their data-parallel reduction can start.
  struct Timing {
    double makespan = 0, stage0_end = 0;
    std::vector<double> grads_ready;  // one per chunk, ascending
  };
  Timing timing(uint8_t schedule, int p, int m, int v, double f, double b, double w);

 private:
  std::map<std::tuple<uint8_t, int, int, int>, std::unique_ptr<PipelineShape>> shapes_;
  std::map<std::tuple<uint8_t, int, int, int, int64_t, int64_t>, Timing> timings_;  // in units of f
};

}  // namespace trainsim::planner::search
