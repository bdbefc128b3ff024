#pragma once
// The model side of Mixture-of-Experts with expert parallelism (EP): how a MoE layer's tokens are
// routed over the EP ranks (an expected-value model, no RNG), and the kernels one rank launches for
// a MoE block, split around the dispatch and combine all-to-alls that the workload builder places
// between the groups.
//
// Routing model (route_tokens). E experts, top_k per token, ep ranks holding E/ep experts each
// (contiguous ids), every rank routing T tokens with the same statistics:
//   1. Popularity. The expert of popularity rank r (0 = hottest) receives a share
//        p_r = (1/(r+1)^s) / sum_q 1/(q+1)^s        (Zipf, s = router_skew; s = 0: p_r = 1/E)
//      of a rank's T*top_k (token, expert) assignments. A token's top_k experts are distinct, so no
//      expert can take more than every token: shares above 1/top_k are capped at 1/top_k and the
//      excess is spread over the cooler experts in proportion to their Zipf weights (water-filling).
//      Real routers are trained towards uniform load (auxiliary loss, or DeepSeek-V3's bias
//      updates); s describes the residual imbalance, not the untrained router.
//   2. Capacity. Each rank sends expert r a_r = T*top_k*p_r assignments in expectation; with a
//      capacity factor c it keeps min(a_r, C) with C = ceil(c*T*top_k/E), as Megatron-Core's
//      get_capacity() sizes the per-rank capacity, and drops the rest. Dropless: C = infinity.
//   3. Placement. Which experts end up hot is an accident of training, so no placement would be
//      known in advance; we spread them round-robin over the ranks (popularity rank r lives on EP
//      rank r mod ep), the placement a load-aware expert placement aims for. Rank 0 then holds
//      popularity ranks 0, ep, 2ep, ... and is the most loaded rank: its j-th expert is at least
//      as hot as any other rank's j-th. Its experts compute ep * min(a_{j*ep}, C) tokens each,
//      and the slowest rank sets the pace of the all-to-alls and the expert GEMMs. Under strong skew
//      the top_k hottest experts take every token; spread over the ranks, they can even the rank
//      loads out again while the experts of a rank stay uneven (so the maximum rank load first
//      rises with s and then may fall).
//   Conservation: sum over experts of tokens computed = ep * T * top_k * (1 - dropped_fraction);
//      padded to capacity (pad_to_capacity) every expert computes ep * C instead, padding included.

#include <optional>
#include <vector>

#include "models/llm/layer_kernels.hpp"
#include "models/llm/model_spec.hpp"
#include "models/llm/moe_dispatch.hpp"
#include "sim/units.hpp"

namespace trainsim::models::llm {

// Expected routing of one MoE layer for one micro-batch, seen from the most loaded EP rank.
struct Routing {
  int64_t experts = 0, top_k = 0, ep = 1;
  int64_t tokens = 0;                 // T: tokens each EP rank routes into the layer
  std::vector<double> expert_tokens;  // tokens each expert computes (from all ep ranks), hottest first
  std::vector<double> rank_tokens;    // tokens each EP rank's experts compute together; [0] is the maximum
  std::vector<double> local_tokens;   // tokens each of the E/ep experts of the most loaded rank computes
  double received_tokens = 0.0;       // sum of local_tokens = rank_tokens[0]
  // (token, expert) rows each rank dispatches: T*top_k*(1 - dropped_fraction), plus the padding
  // under pad_to_capacity
  double sent_tokens = 0.0;
  double self_tokens = 0.0;       // rows of received_tokens that the most loaded rank routed to itself
  double dropped_fraction = 0.0;  // share of the T*top_k assignments dropped by capacity (0: dropless)
  sim::Bytes bytes_per_token;     // one dispatched row: hidden x bytes per element (bf16: 2h)
  // The most loaded rank's dispatch all-to-all, own rows included (nccl-tests' "size"): what it sends
  // (sent_tokens rows) and receives (received_tokens rows). The combine moves the same rows back, so
  // its send and receive are these two swapped; the backward pass repeats both in reverse.
  sim::Bytes dispatch_send, dispatch_recv;
  // The most loaded rank computes this many times the balanced T*top_k rows (1 = balanced).
  double imbalance() const;
};

// Expected routing of `tokens` tokens per EP rank (formula above). Throws ConfigError when ep does
// not divide experts. `bytes_per_element` is that of the dispatched activations (bf16: 2).
Routing route_tokens(int64_t experts, int64_t top_k, int64_t ep, int64_t tokens, double router_skew,
                     std::optional<double> capacity_factor, int64_t hidden, int64_t bytes_per_element = 2,
                     bool pad_to_capacity = false);
// The same with the model's experts, top_k, skew and capacity factor.
Routing route_tokens(const ModelSpec& m, int64_t ep, int64_t tokens, int64_t bytes_per_element = 2);
// The same with the skew the balancing method leaves (routing_skew, moe_dispatch.hpp).
Routing route_tokens(const ModelSpec& m, int64_t ep, int64_t tokens, MoeBalance balance);

// A MoE layer's MLP block on one rank, split the way tasks are: the builder puts the dispatch
// all-to-all between router_fwd and experts_fwd and the combine between experts_fwd and post_fwd
// (backward: post_dgrad, combine reversed, experts_dgrad/wgrad, dispatch reversed, router_dgrad).
// shared_fwd/dgrad/wgrad depend only on the block input and can overlap the all-to-alls.
struct MoeBlockKernels {
  Kernels pre_fwd;        // residual add + MLP norm, as in the dense layer
  Kernels router_fwd;     // router GEMM [T, E], softmax + top-k, permute (gather rows by expert)
  Kernels experts_fwd;    // grouped expert MLPs on the received rows: fc1 per expert, activation, fc2 per expert
  Kernels shared_fwd;     // shared experts as one dense MLP on the rank's T tokens (empty without shared experts)
  Kernels post_fwd;       // unpermute + top-k weighted sum (+ the shared experts' output)
  Kernels pre_bwd;        // norm + residual backward, as in the dense layer
  Kernels post_dgrad;     // unpermute backward: scatter output gradients to the rows, gate-weight gradients
  Kernels experts_dgrad;  // expert input gradients (fc2, activation, fc1)
  Kernels experts_wgrad;  // expert weight gradients
  Kernels shared_dgrad, shared_wgrad;
  Kernels router_dgrad;  // permute backward (sum of the top_k copies), softmax/top-k backward, router dgrad
  Kernels router_wgrad;  // router weight gradient
  // Per-rank buffer of each of the four all-to-alls (dispatch and combine forward, both reversed
  // backward): max(dispatch_send, dispatch_recv) of the most loaded rank, so that a uniform
  // all-to-all of this size moves that rank's rows. 0 when ep == 1 (no all-to-all).
  sim::Bytes a2a_bytes;
};

// Kernels of the MoE block of a layer for which m.is_moe_layer() holds. Token counts come from
// `routing`: the router, permutation and shared experts run on routing.tokens tokens, the routed
// experts on routing.local_tokens rows each (rounded up to whole rows); every rank of an expert
// tensor-parallel group sees the same tokens and holds 1/etp of each expert's width (routed and
// shared). `s` gives the norm and residual kernels (layer_kernels(m, s).mlp.pre_*).
// Expert FLOPs per rank: sum_j 2 * (gates + 1) * m_j * h * expert_ffn_hidden / etp (gates = 2 for SwiGLU).
// `run` adds what the dispatcher and the balancing method launch (moe_dispatch.hpp): under
// aux_loss the load-balancing loss (Megatron-Core switch_load_balancing_loss_func: tokens per
// expert from the [T, E] routing map, the fp32 probabilities summed per expert, the product;
// backward: its gradient added into the [T, E] probabilities' gradient), under aux_free the
// tokens-per-expert count for the bias update, under allgather the unpermute into (and the
// permute's gradient out of) a buffer of all ep*etp*T gathered tokens.
MoeBlockKernels moe_block_kernels(const ModelSpec& m, const LayerShape& s, int64_t ep, int64_t etp,
                                  const Routing& routing, const MoeRun& run = {});

// Forward model FLOPs per sequence for MFU, counted as forward_model_flops_per_sequence (layer_ops.hpp)
// does for dense models, with each MoE layer's MLP counted by its active parameters: the router,
// top_k routed experts and the shared experts. Equal to forward_model_flops_per_sequence for a dense
// model. (Megatron-LM's count leaves the router out: under 0.5% for the presets.)
double moe_forward_model_flops_per_sequence(const ModelSpec& m, int64_t seq_len);

}  // namespace trainsim::models::llm
