#include "models/llm/layer_ops.hpp"

namespace trainsim::models::llm {

Cost kernel_cost(const KernelOp& k, const compute::ComputeModel& cm) {
  switch (k.kind) {
    case KernelOp::Kind::kGemm: return Cost{cm.gemm(k.gemm), k.gemm.flops(), 1};
    case KernelOp::Kind::kMemory:
      return Cost{cm.memory_bound(sim::Bytes(static_cast<int64_t>(k.bytes)), 1), sim::Flops(), 1};
    case KernelOp::Kind::kAttentionFwd: return Cost{cm.flash_attention(sim::Flops(k.flops)), sim::Flops(k.flops), 1};
    case KernelOp::Kind::kAttentionBwd:
      return Cost{cm.flash_attention(sim::Flops(k.flops), true), sim::Flops(k.flops), 1};
  }
  return Cost{};
}

Cost kernels_cost(const Kernels& ks, const compute::ComputeModel& cm) {
  Cost c;
  for (const KernelOp& k : ks) c += kernel_cost(k, cm);
  return c;
}

namespace {
BlockCosts block_costs(const BlockKernels& k, const compute::ComputeModel& cm) {
  BlockCosts c;
  c.pre_fwd = kernels_cost(k.pre_fwd, cm);
  c.main_fwd = kernels_cost(k.main_fwd, cm);
  c.pre_bwd = kernels_cost(k.pre_bwd, cm);
  c.main_dgrad = kernels_cost(k.main_dgrad, cm);
  c.main_wgrad = kernels_cost(k.main_wgrad, cm);
  c.selective_recompute = kernels_cost(k.selective_recompute, cm);
  return c;
}
}  // namespace

LayerCosts layer_costs(const ModelSpec& m, const LayerShape& s, const compute::ComputeModel& cm) {
  const LayerKernels k = layer_kernels(m, s);
  LayerCosts out;
  out.attn = block_costs(k.attn, cm);
  out.mlp = block_costs(k.mlp, cm);
  out.tp_comm_bytes = k.tp_comm_bytes;
  return out;
}

EdgeCosts edge_costs(const ModelSpec& m, const LayerShape& s, const compute::ComputeModel& cm) {
  const EdgeKernels k = edge_kernels(m, s);
  EdgeCosts e;
  e.embed_fwd = kernels_cost(k.embed_fwd, cm);
  e.embed_bwd = kernels_cost(k.embed_bwd, cm);
  e.head_fwd = kernels_cost(k.head_fwd, cm);
  e.head_dgrad = kernels_cost(k.head_dgrad, cm);
  e.head_wgrad = kernels_cost(k.head_wgrad, cm);
  return e;
}

double forward_model_flops_per_sequence(const ModelSpec& m, int64_t seq_len) {
  const double s = static_cast<double>(seq_len), h = static_cast<double>(m.hidden);
  const double kvd = static_cast<double>(m.kv_heads_or_heads() * m.head_dim());
  const double f = static_cast<double>(m.ffn_hidden);
  const double gates = m.activation == "swiglu" ? 2.0 : 1.0;
  const double per_token_matmul = 2.0 * (h * (h + 2 * kvd) + h * h + (gates + 1.0) * h * f);
  const double attention = 4.0 * s * h;  // QK^T and PV over all s keys, per token
  const double head = 2.0 * h * static_cast<double>(m.vocab);
  return s * (static_cast<double>(m.layers) * (per_token_matmul + attention) + head);
}

}  // namespace trainsim::models::llm
