#pragma once
// Kernels of Multi-head Latent Attention's input projections (mla.hpp) on one TP rank, as
// Megatron-Core's MLASelfAttention runs them in training (unabsorbed): the duplicated
// down-projections on the rank's tokens (its sequence shard under SP), the latent RMSNorms, the
// column-parallel up-projections to the local heads' queries, keys (nope) and values, RoPE on the
// rope parts (the one shared RoPE key broadcast to every head), and the concatenation that
// materialises each head's key.

#include "models/llm/layer_kernels.hpp"

namespace trainsim::models::llm {

AttentionInput mla_input_kernels(const ModelSpec& m, const LayerShape& s);

}  // namespace trainsim::models::llm
