#pragma once
// How a MoE layer's tokens travel to their experts and back (the token dispatcher) and how the
// router is kept balanced, as Megatron-Core runs them (docs/parallelism.md, "MoE"):
//  - alltoall (MoEAlltoAllTokenDispatcher, the one NVIDIA's recipes use with EP): permute the
//    (token, expert) rows by destination, one all-to-all over the EP group, an all-gather of the
//    received rows over the expert-TP group; the combine reverses it.
//  - allgather (MoEAllGatherTokenDispatcher): all-gather every token's hidden state and routing
//    (fp32 probabilities and the bool routing map over all experts) over the EP x ETP group, keep
//    the rows of the local experts, scatter the expert outputs into a buffer of all gathered tokens
//    and reduce-scatter it back: (ep*etp - 1) x T rows received whatever the routing, no all-to-all.
//    Simulated as an all-gather over EP then one over ETP (the same bytes as one over EP x ETP).
//  - flex (MoEFlexTokenDispatcher with DeepEP's fused dispatch/combine kernels): a token goes once
//    to each node holding one of its experts (RDMA to the GPU of the same local index) and is
//    forwarded over NVLink there; inside a node, once per GPU. Simulated as the all-to-all of
//    alltoall with its per-rank buffer scaled so that the bytes crossing the bottleneck level
//    (the NIC when the EP group spans nodes, else NVLink) are the deduplicated ones
//    (flex_dedup_factor), plus the top-k indices and weights (int64 + fp32 per expert) the
//    dispatch carries. DeepEP's normal kernels reach ~153 GB/s over NVLink and 43-58 GB/s over
//    RDMA per H800 GPU (deepseek-ai/DeepEP README), i.e. near line rate, as NCCL's all-to-all of
//    large messages does, so the link model is unchanged. Not modelled: the 20 SMs
//    (--moe-deepep-num-sms) its kernels take from compute that overlaps them, FP8 dispatch
//    (Megatron-Core passes bf16 activations), node-limited routing.
// Balancing (moe_balance): aux_loss (the router's load-balancing loss, Megatron's default) leaves
// the residual skew `router_skew` as given and adds its kernels; aux_free (DeepSeek-V3 Sec 2.1.2:
// a per-expert bias on the routing scores, updated from each step's load; no auxiliary loss)
// routes with a smaller skew (aux_free_skew) and counts tokens per expert for the bias update.

#include <cstdint>

#include "models/llm/model_spec.hpp"

namespace trainsim::models::llm {

enum class MoeDispatcher : uint8_t { kAllToAll, kAllGather, kFlex };
enum class MoeBalance : uint8_t { kAuxLoss, kAuxFree };

// How a job runs its MoE layers.
struct MoeRun {
  MoeDispatcher dispatcher = MoeDispatcher::kAllToAll;
  MoeBalance balance = MoeBalance::kAuxLoss;
  int64_t ep_per_node = 1;  // ranks of an EP group in one node (flex: the NVLink / RDMA split)
  // How the experts' GEMMs run: 0 = one grouped kernel (CUTLASS / torch._grouped_mm); n = one GEMM
  // per expert on n streams (Transformer Engine GroupedLinear; ComputeModel::multi_stream_gemm).
  int gemm_streams = 0;
};

// The load imbalance auxiliary-loss-free balancing leaves: the Zipf skew s' whose hottest-expert
// excess over the mean, MaxVio = E * p_0(s') - 1, is kAuxFreeMaxVioRatio times that of `skew`.
// Wang et al., "Auxiliary-Loss-Free Load Balancing Strategy for Mixture-of-Experts" (DeepSeek-AI,
// arXiv:2408.15664), Table 2: MaxVio_global 0.52 with the auxiliary loss against 0.04 without it
// (3B model; 0.72 against 0.04 at 1B): 0.04 / 0.52.
inline constexpr double kAuxFreeMaxVioRatio = 0.04 / 0.52;
double aux_free_skew(double skew, int64_t experts, int64_t top_k);
// The skew the router routes with under `balance`.
double routing_skew(const MoeSpec& moe, MoeBalance balance);

// DeepEP's deduplication: bytes a flex dispatch puts on the bottleneck level over what the
// all-to-all dispatcher puts there, for a token whose top_k distinct experts are uniformly spread
// over `experts` experts held by `ep` ranks, `ep_per_node` of them per node. Across nodes (the
// group spans n > 1 nodes): (n - 1) (1 - C(E - E/n, k) / C(E, k)) node copies against
// k (ep - ep_per_node) / ep rows; inside one node: (ep - 1) (1 - C(E - E/ep, k) / C(E, k)) rank
// copies against k (ep - 1) / ep rows. 1 when ep = 1 or every expert of a token is on its own rank.
double flex_dedup_factor(int64_t experts, int64_t top_k, int64_t ep, int64_t ep_per_node);

}  // namespace trainsim::models::llm
