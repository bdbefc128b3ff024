#pragma once
// Plans written directly in fused form for the flow network's fast mode, where the full plan
// would not fit: a ring over n ranks has 2(n - 1) steps of n transfers, 537 M transfers at 16,384
// GPUs. A fused plan keeps the ring's connections and cuts its steps into at most `max_steps`
// super-steps; each transfer moves the chunks of its run of steps on its connection (their summed
// bytes) and pays the per-step latency once per step (Transfer::steps). It waits for the transfer
// into its source in the previous super-step (the data) and for its connection's previous one
// (FIFO, added by the executor). This is the step fusion FlowExecutor applies to plans it is given
// whole (ExecOptions::max_steps): on an idle network the ring runs in lockstep and a super-step of
// k steps takes exactly k steps' time; under contention it averages the sharing over its k steps.
// Fused plans are for the executor only: a transfer moves several chunks, so check_plan's chunk
// rules do not hold, and `after` is written here, not derived.

#include <cstdint>

#include "models/collectives/collective.hpp"

namespace trainsim::models::collectives {

// A ring all-reduce, all-gather or reduce-scatter of `bytes` per rank over ranks 0..n-1 in ring
// order (rank a sends to a + 1), chunked as the ring plan is (n chunks of `bytes` / n; for
// all-gather and reduce-scatter `bytes` is the whole buffer), in at most max_steps super-steps.
CollectivePlan fused_ring(CollectiveOp op, sim::Bytes bytes, int32_t n, int32_t max_steps);

// The hierarchical all-reduce (algorithms/hierarchical.cpp) as server 0's transfers of shard 0:
// the ring reduce-scatter inside server 0 that leaves shard 0 summed on its local rank 0, ring
// position 0's 2(m - 1) transfers of the all-reduce between the servers' local ranks 0, and the
// ring all-gather of shard 0 back inside server 0, block by block (the cross-server ring's m
// blocks of the shard, as the whole plan moves them): 2 m (g - 1) + 2(m - 1) transfers for m
// servers of g ranks. Every other transfer of the plan is an image of one of these under the
// rotations (k, i) -> (k + a, i + b) of servers and local ranks (ring position a is position 0
// translated, shard l is shard 0 rotated by l inside every server), so with RankRotation{m, g}
// they stand for the whole plan; what position 0 sends next waits for its own previous
// transfer, the image of the one that brings it the data, and a block leaves for the server's
// all-gather when its final value has reached local rank 0. The group must span servers with
// g >= 1 ranks on each.
CollectivePlan hierarchical_representative(const CollectiveSpec& spec, const Group& group);

}  // namespace trainsim::models::collectives
