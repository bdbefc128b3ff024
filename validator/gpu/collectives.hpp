#pragma once
// NCCL collectives over the world's GPUs, timed the way nccl-tests times them (the slowest rank's
// median of device-timed repetitions; bus bandwidth from the op's bus factor).

#include <cstdint>
#include <string>
#include <vector>

#include "models/calibration/measurement.hpp"
#include "validator/gpu/world.hpp"

namespace trainsim::validator::gpu {

namespace calibration = models::calibration;

struct CollectiveCase {
  std::string op;     // all_reduce | all_gather | reduce_scatter | all_to_all | send_recv
  int64_t bytes = 0;  // per-rank buffer (nccl-tests "size")
  std::string name;   // what the plan uses it for ("tp.all_gather", "dp.reduce_scatter", ...)
};

// Times each case on a communicator of every rank of `world` (the plan's group when the world is
// that group; a world of one GPU gives "local" records that calibrate nothing). `gpus_per_node`
// decides the link class: "nvlink" inside one node, "ib" across nodes.
std::vector<calibration::Measurement> measure_collectives(const World& world, const std::vector<CollectiveCase>& cases,
                                                          int gpus_per_node, int warmup, int reps);

}  // namespace trainsim::validator::gpu
