#pragma once
// The GPU replay backend (backend.hpp): validator/gpu/replay_backend.cpp in CUDA builds; without
// CUDA, validator/no_gpu.cpp, whose factory throws NoGpuError (exit 4).

#include <memory>

#include "models/workload/job/job.hpp"
#include "validator/replay/backend.hpp"

namespace trainsim::validator::replay {

// One process per GPU (local rank modulo the visible devices), NCCL over an MPI-broadcast id.
// Throws NoGpuError when there is no GPU, NCCL or MPI for the plan's ranks, and PlanError when
// the plan needs more memory per GPU than the device has.
std::unique_ptr<Backend> make_gpu_backend(const models::workload::Job& job, double timeout_s);

}  // namespace trainsim::validator::replay
