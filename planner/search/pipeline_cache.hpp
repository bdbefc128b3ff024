#pragma once
// What the fast estimate needs from a pipeline schedule, computed once per shape (schedule,
// stages, micro-batches, chunks) and reused by every candidate of that shape:
//  - activation peaks: per stage, the Pareto-maximal counts (all chunks alive, those of the
//    chunk holding the first virtual stage, those of the chunk holding the last) over the
//    stage's order, so that the peak bytes for any per-chunk sizes are an exact maximum over a
//    handful of points (the first and last virtual stages are the only ones whose size differs);
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
  // [stage] -> points (alive chunks, alive chunks of the first virtual stage, of the last).
  std::vector<std::vector<std::array<int32_t, 3>>> activation_points;
  int32_t busiest_middle_stage = -1;  // stage holding neither end with the most chunks alive (-1: none)
};

class PipelineCache {
 public:
  const PipelineShape& shape(uint8_t schedule, int p, int m, int v);
  // Makespan of one iteration's ops in seconds for op times f, b, w (w = 0 unless the schedule
  // splits weight gradients).
  double makespan(uint8_t schedule, int p, int m, int v, double f, double b, double w);

 private:
  std::map<std::tuple<uint8_t, int, int, int>, std::unique_ptr<PipelineShape>> shapes_;
  std::map<std::tuple<uint8_t, int, int, int, int, int>, double> makespans_;  // in units of f
};

}  // namespace trainsim::planner::search
