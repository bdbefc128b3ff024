#pragma once
// The sizes a job's kernels and collectives run at, as a kernel calibration's evidence sees them
// (models/stack/evidence.hpp): a calibration fitted to GEMMs of m up to 16,384 and collectives of
// 1-256 MiB says little about a job whose GEMMs have m = 131,072 or whose buckets are 4 KiB.
//
//   GEMMs     one rank's GEMMs for a micro-batch, forward and backward: each layer's attention
//             block and dense MLP or MoE block, and the LM head, at the job's micro-batch,
//             sequence shard and tensor-parallel split (the routed experts at the rows the most
//             loaded expert receives). The span of each dimension is over the largest GEMMs (times
//             the layers that run them) that together do 95 % of the FLOPs, so that a router's
//             [T, E] product does not set the smallest m.
//   messages  the per-rank buffer (nccl-tests' "size") of each kind of collective the job runs:
//             tensor-parallel activations, pipeline sends, context-parallel KV blocks, the expert
//             dispatch, data-parallel gradient buckets (ZeRO-3 / FSDP: one layer's parameters).
//             None on a single GPU. These are the sizes' scale, not the simulator's exact
//             messages (a stage's last bucket is smaller, a MoE layer's dense buckets leave the
//             experts out): the 2x rule the evidence applies absorbs the difference.

#include "models/stack/evidence.hpp"
#include "models/workload/job/job.hpp"

namespace trainsim::models::workload {

struct KernelSizes {
  stack::Range gemm_m, gemm_n, gemm_k, message_bytes;
};

KernelSizes kernel_sizes(const Job& j);

}  // namespace trainsim::models::workload
