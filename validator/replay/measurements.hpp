#pragma once
// The replay's communication as calibration records (models/calibration/measurement.hpp), so the
// collective fit can use what a multi-GPU replay measured per link class beside the
// microbenchmarks: one record per (op, bytes, communicator size, link class), its time the median
// over every instance of the time from the last member's issue to the members' median completion
// (the wait for late members is skew, not link time). A transfer is a "send_recv" of 2 ranks.
// Link class: "nvlink" when every member sits on one node (global rank / gpus_per_node), else "ib".
// Only GPU timings calibrate links; the CLI refuses to save the CPU backend's.

#include <vector>

#include "models/calibration/measurement.hpp"
#include "validator/replay/executor.hpp"
#include "validator/replay/program.hpp"

namespace trainsim::validator::replay {

// `timelines` in simulated seconds (executor.hpp), one per rank of `program`, any order.
std::vector<models::calibration::Measurement> comm_measurements(const Program& program,
                                                                const std::vector<RankTimeline>& timelines,
                                                                double scale, int gpus_per_node);

}  // namespace trainsim::validator::replay
