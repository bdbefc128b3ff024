#include "models/llm/mla.hpp"

namespace trainsim::models::llm {

MlaParameters mla_parameters(const MlaSpec& a, int64_t hidden, int64_t heads) {
  const double h = static_cast<double>(hidden), n = static_cast<double>(heads);
  const double qk = static_cast<double>(a.qk_head_dim()), rope = static_cast<double>(a.qk_rope_head_dim);
  const double kv = static_cast<double>(a.kv_lora_rank);
  MlaParameters p;
  if (a.q_lora_rank) {
    const double q = static_cast<double>(*a.q_lora_rank);
    p.replicated += h * q + q;  // down-projection and the latent RMSNorm
    p.sharded += q * n * qk;    // up-projection to the heads' nope + rope parts
  } else {
    p.sharded += h * n * qk;
  }
  p.replicated += h * (kv + rope) + kv;  // KV down-projection with the shared RoPE key, latent RMSNorm
  p.sharded += kv * n * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim);  // K (nope) and V up
  p.sharded += n * static_cast<double>(a.v_head_dim) * h;                        // output projection
  return p;
}

const sim::config::Schema<MlaSpec>& mla_schema() {
  static const sim::config::Schema<MlaSpec> schema = [] {
    sim::config::Schema<MlaSpec> s("mla",
                                   "Multi-head Latent Attention (the `mla` object of a model; DeepSeek-V2/V3). "
                                   "Trained unabsorbed, as Megatron-Core runs it.");
    s.nullable_integer("q_lora_rank", &MlaSpec::q_lora_rank, 1, 1000000,
                       "Rank of the query latent (DeepSeek-V3: 1536); null = queries projected straight from h.")
        .integer("kv_lora_rank", &MlaSpec::kv_lora_rank, 1, 1000000, std::nullopt,
                 "Rank of the key/value latent (DeepSeek-V3: 512).")
        .integer("qk_nope_head_dim", &MlaSpec::qk_nope_head_dim, 1, 100000, std::nullopt,
                 "Per-head query/key width without rotary embedding (DeepSeek-V3: 128).")
        .integer("qk_rope_head_dim", &MlaSpec::qk_rope_head_dim, 0, 100000, std::nullopt,
                 "Per-head rotary query width, and the width of the one RoPE key shared by all heads "
                 "(DeepSeek-V3: 64).")
        .integer("v_head_dim", &MlaSpec::v_head_dim, 1, 100000, std::nullopt,
                 "Per-head value width (DeepSeek-V3: 128).");
    return s;
  }();
  return schema;
}

}  // namespace trainsim::models::llm
