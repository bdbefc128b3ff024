#pragma once
// What a host-device synchronization costs a training step that PyTorch issues eagerly.
//
// Normally the host (Python, PyTorch's dispatcher, the framework's modules) runs ahead of the GPU
// and the kernels queue up, so host time is hidden behind device time. A synchronization drains
// that lead: the host waits until the GPU has finished, then has to issue every following kernel
// while the GPU waits for it. Until the host is ahead again, each kernel starts only when both the
// GPU is free and the host has issued it:
//   start_i = max(host_i, end_(i-1)),  host_i = latency + (host ops up to and including kernel i) x per_kernel
// and the GPU idles for sum_i max(0, host_i - end_(i-1)).
//
// Megatron-Core's dropless MoE token dispatchers synchronize once per MoE layer forward: the
// all-to-all needs its input and output split sizes on the host, so the dispatcher copies the
// per-expert token counts to the host and synchronizes the stream before the EP all-to-all
// (megatron/core/transformer/moe/token_dispatcher.py, cuda_sync_point = "before_ep_alltoall";
// the backward reuses the splits and does not synchronize). The layer's remaining work is then
// issued by a host that starts from zero: the dispatch, the local experts (Transformer Engine's
// GroupedLinear splits the rows and issues one cuBLAS GEMM per local expert from the host, so its
// host work grows with the experts a rank holds), the combine, and the next layer's attention up
// to its router. Fine-grained MoE layers (many small experts, little work per layer) cannot hide
// that host time; coarse ones (Mixtral) and all-to-alls over InfiniBand can.

#include <cstdint>
#include <vector>

#include "models/llm/layer_ops.hpp"
#include "sim/units.hpp"

namespace trainsim::models::llm {

// One launch as the host issues it: host operations before the launch, and its device time.
struct IssueStep {
  int64_t host_ops = 1;
  sim::Time gpu;
};

// GPU idle time when the host, synchronized with an idle GPU, issues `steps` in order (formula above).
sim::Time host_sync_stall(const std::vector<IssueStep>& steps, sim::Time per_kernel, sim::Time latency);

// What a MoE layer's forward issues after its dispatcher synchronizes, one step per kernel (a group
// of k kernels as k steps of equal device time): the dispatch all-to-all, the expert-TP all-gather,
// the local experts (one host operation per expert and GEMM, launched together), the reduce-scatter,
// the combine, the unpermute and shared experts, then the next layer's attention block and the MLP
// norm and router of the next MoE layer. Captured in CUDA graphs (workload/job/cuda_graphs.hpp),
// the attention block (`attn_graphed`) and the norm and router (`router_graphed`) are one launch
// each.
std::vector<IssueStep> moe_sync_steps(const MoeBlockCosts& moe, const LayerCosts& next, sim::Time dispatch,
                                      sim::Time combine, sim::Time etp_comm, int64_t local_experts,
                                      bool attn_graphed = false, bool router_graphed = false);

}  // namespace trainsim::models::llm
