#pragma once
// Sharded weights and gradients of one pipeline stage: ZeRO-3 / FSDP per-layer parameter
// all-gathers (with a prefetch window) and gradient reduce-scatters, the bucketed data-parallel
// gradient reduction (all-reduce, or reduce-scatter inside the shard group plus an all-reduce
// across replicas under HSDP / MiCS; routed experts over their own group), and the distributed
// optimizer's overlapped parameter all-gathers.

#include <cstdint>
#include <deque>
#include <vector>

#include "models/workload/dag/build_context.hpp"
#include "models/workload/dag/stage_emitter.hpp"

namespace trainsim::models::workload::dag {

// ZeRO-3 / FSDP state of one stage.
struct ShardState {
  int held_chunk = -1;              // chunk whose weights stay gathered (reuse / no reshard)
  std::deque<Handle> recent;        // last task of recently computed layers (prefetch window)
  std::vector<Handle> param_ready;  // per layer: the overlapped parameter all-gather it waits for
};

// All-gathers a layer's weights inside the shard group; with prefetch depth k it may start once
// the layer k+1 places earlier has finished.
Handle zero3_gather(const BuildContext& c, StageEmitter& e, const ShardState& st, int mb, int layer);
// ZeRO-3: the embedding (or LM head) weights are sharded too and gathered before each use
// (FSDP's root unit). Empty below ZeRO-3.
Handle edge_gather(const BuildContext& c, StageEmitter& e, int mb);
// Records the last task of a computed layer (the prefetch window).
void layer_done(ShardState& st, const Handle& h);
// Gradient reduction of one layer under ZeRO-3: reduce-scatter inside the shard group, then
// all-reduce of the shard across replicas (HSDP).
Handle zero3_reduce(const BuildContext& c, StageEmitter& e, int mb, int layer, const Handle& wg);

// Per-stage state of the bucketed gradient reduction.
struct Buckets {
  std::vector<Handle> pending;  // weight-gradient tasks whose gradients are in the open bucket
  double params = 0;            // parameters in the open bucket
};

// Issues the open bucket's reduction once it holds bucket_size bytes (or when forced): an
// all-reduce over the gradient group, or with ZeRO a reduce-scatter inside the shard group (and
// an all-reduce of the shard across replica groups under HSDP / MiCS). `expert`: a bucket of
// routed-expert gradients. The reduction (or the pending tasks) go to `tail`.
void flush_bucket(const BuildContext& c, StageEmitter& e, Buckets& b, std::vector<Handle>& tail, int mb, bool force,
                  bool expert = false);

// Distributed optimizer with --overlap-param-gather: the parameters updated by the previous
// step are all-gathered at the start of this iteration, bucket by bucket in layer order, and
// each layer's first forward waits for its bucket (st.param_ready).
void emit_param_gathers(const BuildContext& c, StageEmitter& e, int64_t s, ShardState& st);

}  // namespace trainsim::models::workload::dag
