#pragma once
// Each rank's measured replay beside its simulated timeline (docs/validator.md): the iteration,
// the per-op error of compute and of communication (median and worst), the exposed
// communication (communication time with no compute running on the rank) and the bubble (time
// the compute stream is idle inside the iteration). All in simulated seconds; the report and a
// Perfetto trace holding both timelines.

#include <ostream>
#include <string>
#include <vector>

#include "sim/config/schema.hpp"
#include "validator/replay/check.hpp"
#include "validator/replay/executor.hpp"
#include "validator/replay/program.hpp"

namespace trainsim::validator::replay {

struct RankComparison {
  int32_t rank = 0;
  int64_t ops = 0;
  double sim_iteration = 0, measured_iteration = 0;
  double compute_error_median = 0, compute_error_max = 0;  // (measured - simulated) / simulated
  double comm_error_median = 0, comm_error_max = 0;
  double sim_exposed_comm = 0, measured_exposed_comm = 0;
  double sim_bubble = 0, measured_bubble = 0;
};

struct ReplayReport {
  std::string backend;
  double scale = 1;
  CheckReport checks;
  std::vector<RankComparison> ranks;
  double sim_iteration = 0, measured_iteration = 0;  // over every rank
  sim::config::Json to_json() const;
};

RankComparison compare_rank(const RankProgram& program, const RankTimeline& measured);
ReplayReport compare(const Program& program, const std::vector<RankTimeline>& measured, const CheckReport& checks,
                     const std::string& backend, double scale);
void print_report(std::ostream& out, const ReplayReport& r);

// Both timelines in one Chrome / Perfetto trace: process "sim rank R" and "replay rank R", one
// thread per stream, an "X" event per op (microseconds of simulated time).
sim::config::Json perfetto_trace(const Program& program, const std::vector<RankTimeline>& measured);

}  // namespace trainsim::validator::replay
