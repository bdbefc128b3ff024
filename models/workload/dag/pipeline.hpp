#pragma once
// The walk over the pipeline schedule: every stage's ops (F, B, W) in the schedule's order,
// each expanded into its layers' tasks, with the pipeline transfers between virtual stages,
// activation memory and offload, ZeRO-3 gathers and the gradient buckets. A stage advances while
// its next op has its inputs (cross-stage edges need their producer built first).

#include <array>
#include <cstdint>
#include <vector>

#include "models/schedules/schedule.hpp"
#include "models/workload/dag/build_context.hpp"
#include "models/workload/dag/communicators.hpp"
#include "models/workload/dag/sharding.hpp"
#include "models/workload/dag/stage_emitter.hpp"

namespace trainsim::models::workload::dag {

// One pipeline stage while its ops are emitted.
struct StageState {
  StageState(Workload& w, Communicators& comms, std::vector<uint32_t> members, sim::Time dispatch)
      : emit(w, comms, std::move(members), dispatch) {}

  StageEmitter emit;
  size_t pos = 0;            // next op of the stage's order
  ShardState shard;          // ZeRO-3 / overlapped parameter gathers
  std::vector<Handle> tail;  // tasks the optimizer step waits for
  Buckets buckets, expert_buckets;
  Handle embed_grad, head_grad;  // the final embedding / LM-head weight gradients (tied embeddings)
  std::vector<int> last_grad;    // per chunk: micro-batch of the last gradient-producing op (B or W)
  std::vector<int> last_b;       // per chunk: micro-batch of the last B op
  std::vector<Handle> op_end;    // the end of each op, in order (activation offload's prefetch gate)
};

// One micro-batch of one virtual stage.
struct ChunkState {
  Handle sent_fwd, sent_bwd;  // what the next / previous virtual stage waits for (a transfer, or the
                              // op's end when that stage is on the same rank)
  Handle loss;                // last virtual stage: the loss
  Handle b_done;              // the end of the backward's layers
  Handle offloaded;           // activations copied to the host (activation offload)
  // Split schedules: the deferred weight gradients of each layer (last layer first), per block.
  std::vector<std::array<PendingWgrad, 2>> deferred;
};

struct PipelineState {
  schedules::StageOrders orders;  // per stage
  std::vector<StageState> stages;
  std::vector<ChunkState> chunks;  // [virtual stage * microbatches + micro-batch]
  int64_t microbatches = 1;

  ChunkState& chunk(int64_t vs, int mb) { return chunks[static_cast<size_t>(vs * microbatches + mb)]; }
};

// Rank slots of pipeline stage `stage`.
std::vector<uint32_t> members_of(const Workload& w, int64_t stage);

// The schedule's orders, one emitter per stage (with the overlapped parameter gathers emitted),
// and when each chunk's gradients are final.
PipelineState make_pipeline_state(const BuildContext& c, Workload& w, Communicators& comms);

// Emits every op of every stage.
void walk_pipeline(const BuildContext& c, const Communicators& comms, Workload& w, PipelineState& ps);

}  // namespace trainsim::models::workload::dag
