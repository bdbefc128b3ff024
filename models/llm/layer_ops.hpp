#pragma once
// Costs of a decoder layer's kernels (layer_kernels.hpp) on one tensor-parallel rank, priced by a
// ComputeModel and summed the way the workload builder splits tasks.

#include <string>
#include <vector>

#include "models/compute/compute_model.hpp"
#include "models/llm/layer_kernels.hpp"
#include "models/llm/model_spec.hpp"
#include "models/llm/moe_dispatch.hpp"
#include "sim/units.hpp"

namespace trainsim::models::llm {

// Device time, FLOPs and kernel count of a group of kernels issued back to back.
struct Cost {
  sim::Time time;
  sim::Flops flops;
  int kernels = 0;
  Cost& operator+=(const Cost& o) {
    time += o.time;
    flops += o.flops;
    kernels += o.kernels;
    return *this;
  }
  // Kernels are issued by the host one after another: a group of short kernels cannot finish
  // faster than the host can dispatch them (eager PyTorch), whatever the GPU's speed.
  sim::Time with_dispatch(sim::Time per_kernel) const {
    const sim::Time host = per_kernel * kernels;
    return host > time ? host : time;
  }
};

// Costs of one block (attention or MLP) of a layer, split the way tasks are.
struct BlockCosts {
  Cost pre_fwd;              // residual add of the previous block + norm (before the TP input comm)
  Cost main_fwd;             // GEMMs, attention core / activation
  Cost pre_bwd;              // norm + residual backward (after the TP input-gradient comm)
  Cost main_dgrad;           // input-gradient GEMMs and elementwise backward
  Cost main_wgrad;           // weight-gradient GEMMs
  Cost selective_recompute;  // extra forward work redone before backward under selective recompute
  Cost module_recompute;     // forward work redone for the shape's recompute_modules (norm, MLP, MLA up-proj)
};

struct LayerCosts {
  BlockCosts attn, mlp;
  sim::Bytes tp_comm_bytes;  // per-rank buffer of each TP collective (b*s*h activations)
};

// One kernel's device time (launch included) and FLOPs.
Cost kernel_cost(const KernelOp& k, const compute::ComputeModel& cm);
Cost kernels_cost(const Kernels& ks, const compute::ComputeModel& cm);
// FSDP2's copy-out after a parameter all-gather: one kernel reading the gathered flat buffer and
// writing the unsharded parameters (`gathered_bytes` each way).
Cost fsdp_copy_out_cost(double gathered_bytes, const compute::ComputeModel& cm);

LayerCosts layer_costs(const ModelSpec& m, const LayerShape& s, const compute::ComputeModel& cm);

// Costs of the embedding (first stage) and the output layer + loss (last stage).
struct EdgeCosts {
  Cost embed_fwd, embed_bwd;
  Cost head_fwd, head_dgrad, head_wgrad;  // final norm + LM head GEMM + cross-entropy
  Cost mtp_fwd, mtp_dgrad, mtp_wgrad;     // one MTP module's embedding, norms and projection
};
EdgeCosts edge_costs(const ModelSpec& m, const LayerShape& s, const compute::ComputeModel& cm);

// A MoE layer's MLP block on one rank, priced the way the workload builder splits tasks around the
// dispatcher's collectives (moe_dispatch.hpp). Routed-expert GEMMs run as grouped GEMMs
// (--moe-grouped-gemm): the GEMMs of one role (fc1, fc2, their gradients) over the local experts
// are one ComputeModel::grouped_gemm, each expert with its own rows. Shared experts run whole on
// the rank's own tokens. `tokens` are those the rank routes (its sequence-parallel shard of
// micro_batch x seq_len / cp).
struct MoeBlockCosts {
  Cost pre_fwd, router_fwd, experts_fwd, shared_fwd, post_fwd;
  int experts_fwd_gemm_launches = 2;  // GEMM kernels among experts_fwd's (2 grouped, or one per expert and role)
  Cost pre_bwd, post_dgrad, experts_dgrad, shared_dgrad, router_dgrad, wgrad;
  // Forward work redone before the block's backward for the shape's recompute_modules: the MLP
  // norm (layernorm), the experts' activation (moe_act), the shared experts (shared_experts).
  // The whole block (moe) is re-emitted by the workload builder instead.
  Cost recompute;
  // alltoall and flex: the per-rank buffer of each EP all-to-all (0 when ep = 1); the forward
  // dispatch's carries flex's routing metadata too.
  sim::Bytes a2a, a2a_dispatch;
  sim::Bytes etp_rows;  // alltoall and flex: expert-TP all-gather / reduce-scatter of the received rows
  // allgather: output buffers of the token all-gathers (and input buffers of the reduce-scatters)
  // over EP (ep*T rows) and then over ETP (ep*etp*T rows); the forward gathers also carry the
  // routing (fp32 probabilities and the bool routing map over all experts).
  sim::Bytes gather_ep, gather_etp, gather_ep_fwd, gather_etp_fwd;
};
MoeBlockCosts moe_block_costs(const ModelSpec& m, const LayerShape& s, int64_t ep, int64_t etp, int64_t tokens,
                              const compute::ComputeModel& cm, const MoeRun& run = {});
// The routed experts' kernels with the GEMMs of each role priced as one grouped GEMM (the
// "moe.expertN." prefix of their names dropped), or with `streams` > 0 as per-expert GEMMs on that
// many streams (ComputeModel::multi_stream_gemm; one kernel each for the host), the other kernels
// one by one.
Cost grouped_experts_cost(const Kernels& ks, const compute::ComputeModel& cm, int streams = 0);

// Forward FLOPs per sequence of the whole model as Megatron counts model FLOPs: all matmuls,
// attention scores over the full s x s (no causal halving; a local layer's queries over its window,
// QK^T at the qk width and PV at the v width under MLA), LM head; embeddings excluded. MTP modules
// add their projection, layer and LM head.
double forward_model_flops_per_sequence(const ModelSpec& m, int64_t seq_len);

}  // namespace trainsim::models::llm
