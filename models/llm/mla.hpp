#pragma once
// Multi-head Latent Attention (DeepSeek-V2, arXiv:2405.04434 Sec 2.1; DeepSeek-V3, arXiv:2412.19437
// Sec 2.1.1): queries and keys/values go through low-rank latents. The `mla` object of a model.
//
// Per layer, with h = hidden, n = heads, dn = qk_nope_head_dim, dr = qk_rope_head_dim,
// dv = v_head_dim, rq = q_lora_rank, rkv = kv_lora_rank:
//   queries   h*rq (down) + rq (latent RMSNorm) + rq*n*(dn+dr) (up); without q_lora_rank h*n*(dn+dr)
//   keys/vals h*(rkv+dr) (down, with the shared RoPE key) + rkv (latent RMSNorm) + rkv*n*(dn+dv) (up)
//   output    n*dv*h
// Training runs the unabsorbed form, as Megatron-Core's MLASelfAttention does: the up-projections
// materialise per-head K (dn, plus the shared dr RoPE part) and V (dv), then ordinary causal
// attention runs with a qk head dimension dn+dr and a v head dimension dv. The absorbed form (W_uk
// folded into the query, W_uv into the output) saves KV-cache reads at decode time and is
// inference-only. Tensor parallelism splits the heads (up-projections column-parallel, output
// row-parallel); the down-projections and their latent norms are duplicated on every TP rank
// (Megatron-Core builds linear_q_down_proj / linear_kv_down_proj with parallel_mode="duplicated"
// and all-reduces their gradients over TP), and run on the rank's sequence shard under SP.

#include <cstdint>
#include <optional>

#include "sim/config/schema.hpp"

namespace trainsim::models::llm {

struct MlaSpec {
  std::optional<int64_t> q_lora_rank;  // null: queries projected straight from h (DeepSeek-V2-Lite)
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
  int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
};

// Parameters of one MLA attention block (no norm before it), split into what every TP rank holds
// whole (down-projections and latent norms) and what TP splits (up- and output projections).
struct MlaParameters {
  double replicated = 0.0;
  double sharded = 0.0;
  double total() const { return replicated + sharded; }
};
MlaParameters mla_parameters(const MlaSpec& a, int64_t hidden, int64_t heads);

const sim::config::Schema<MlaSpec>& mla_schema();

}  // namespace trainsim::models::llm
