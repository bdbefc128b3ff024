#pragma once
// The memory inputs of a job's pipeline stages, shared by the pre-simulation fit check
// (run/simulate.cpp) and the workload builder (which allocates each chunk's activations on the
// simulated timeline): which stage holds the embedding and the LM head under the schedule's
// placement, how many layers each chunk has (--pp-layout), and how sharding, recompute, context
// parallelism and offload change what a rank keeps.

#include <cstdint>
#include <vector>

#include "models/memory/footprint.hpp"
#include "models/schedules/schedule.hpp"
#include "models/workload/job/job.hpp"

namespace trainsim::models::workload {

// Stages holding the first (embedding) and the last (LM head + loss) virtual stage.
int64_t embedding_stage(const Job& job);
int64_t head_stage(const Job& job);

// NCCL communicators one rank uses (groups of more than one rank: TP, CP, DP, PP, EP).
int64_t communicators(const Job& job);

// Model states, buffers and the largest chunk's activations of pipeline stage `stage`.
memory::StageMemoryInput stage_memory_input(const Job& job, int64_t stage);

// Activation bytes one micro-batch of virtual stage `vs` keeps until its backward (or W) is done.
int64_t chunk_activation_bytes(const Job& job, int64_t vs);

// Peak activation bytes of a stage when its compute stream runs `order` as written: a chunk's
// activations live from its forward to its backward (to its W when the schedule splits weight
// gradients); with activation offload at most the two chunks in use stay on the device.
struct ActivationPeak {
  int64_t bytes = 0;
  int64_t chunks = 0;  // most chunk-micro-batches alive at once
};
ActivationPeak activation_peak(const Job& job, int64_t stage, const std::vector<schedules::Op>& order);

// Host memory the job's offloads use per GPU of pipeline stage `stage` running `order`: under
// offload_optimizer the optimizer's states (fp32 master weights and moments, sharded as the device
// would hold them) and the fp32 gradients the CPU step reads (4 bytes per parameter of the shard);
// under offload_activation_layers N, N / L of every chunk in flight at the schedule's peak (L the
// stage's longest chunk); under offload_activations, every chunk in flight but the largest (the
// one being computed). 0 without offload.
int64_t host_offload_bytes(const Job& job, int64_t stage, const std::vector<schedules::Op>& order);

}  // namespace trainsim::models::workload
