#include "models/llm/layer_ops.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "models/llm/mla.hpp"
#include "models/llm/moe.hpp"
#include "models/llm/recompute_modules.hpp"

namespace trainsim::models::llm {

Cost kernel_cost(const KernelOp& k, const compute::ComputeModel& cm) {
  switch (k.kind) {
    case KernelOp::Kind::kGemm: return Cost{k.sixteen_bit ? cm.gemm16(k.gemm) : cm.gemm(k.gemm), k.gemm.flops(), 1};
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

Cost fsdp_copy_out_cost(double gathered_bytes, const compute::ComputeModel& cm) {
  return kernel_cost(memory_kernel("fsdp.copy_out", 2.0 * gathered_bytes), cm);
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
  c.module_recompute = kernels_cost(k.module_recompute, cm);
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
  e.mtp_fwd = kernels_cost(k.mtp_fwd, cm);
  e.mtp_dgrad = kernels_cost(k.mtp_dgrad, cm);
  e.mtp_wgrad = kernels_cost(k.mtp_wgrad, cm);
  return e;
}

double forward_model_flops_per_sequence(const ModelSpec& m, int64_t seq_len) {
  const double s = static_cast<double>(seq_len), h = static_cast<double>(m.hidden);
  const double kvd = static_cast<double>(m.kv_heads_or_heads() * m.head_dim());
  const double f = static_cast<double>(m.ffn_hidden);
  const double gates = m.activation == "swiglu" ? 2.0 : 1.0;
  const double q = static_cast<double>(m.q_width());
  // MLA: its projections' weights (the latent norms are not matmuls).
  const double attn_linear = m.mla ? mla_parameters(*m.mla, m.hidden, m.heads).total() -
                                         static_cast<double>(m.mla->q_lora_rank.value_or(0) + m.mla->kv_lora_rank)
                                   : h * (q + 2 * kvd) + q * h;
  const double per_token_matmul = 2.0 * (attn_linear + (gates + 1.0) * h * f);
  // QK^T (qk width) and PV (v width) over all s keys, per token; = 4 s q without MLA.
  const double qv = static_cast<double>(m.q_width() + m.v_width());
  const double attention = 2.0 * s * qv;
  const double head = 2.0 * h * static_cast<double>(m.vocab);
  const double layers = static_cast<double>(m.layers);
  double flops = s * (layers * (per_token_matmul + attention) + head);
  if (m.attention_window) {
    // A local layer's queries see at most `size` keys: its attention term shrinks to that many keys.
    const double local_keys = static_cast<double>(std::min(m.attention_window->size, seq_len));
    int64_t local = 0;
    for (int64_t i = 0; i < m.layers; ++i) local += m.is_local_layer(i) ? 1 : 0;
    flops -= s * static_cast<double>(local) * 2.0 * (s - local_keys) * qv;
  }
  // Each MTP module: its projection (2h -> h), its layer and one more LM head.
  if (m.mtp_layers > 0)
    flops += s * static_cast<double>(m.mtp_layers) * (per_token_matmul + attention + 2.0 * 2.0 * h * h + head);
  return flops;
}

Cost grouped_experts_cost(const Kernels& ks, const compute::ComputeModel& cm, int streams) {
  Cost c;
  std::map<std::string, std::vector<compute::GemmShape>> groups;  // role -> one problem per expert
  const std::string prefix = "moe.expert";
  for (const KernelOp& k : ks) {
    if (k.kind != KernelOp::Kind::kGemm || k.name.rfind(prefix, 0) != 0) {
      c += kernel_cost(k, cm);
      continue;
    }
    const size_t dot = k.name.find('.', prefix.size());
    groups[dot == std::string::npos ? k.name : k.name.substr(dot + 1)].push_back(k.gemm);
    c.flops += k.gemm.flops();
  }
  for (const auto& [role, problems] : groups) {
    const int launches = streams > 0 ? static_cast<int>(problems.size()) : 1;
    c += Cost{cm.multi_stream_gemm(problems, streams), sim::Flops(), launches};
  }
  return c;
}

MoeBlockCosts moe_block_costs(const ModelSpec& m, const LayerShape& shape, int64_t ep, int64_t etp, int64_t tokens,
                              const compute::ComputeModel& cm, const MoeRun& run) {
  const Routing routing = route_tokens(m, ep, tokens, run.balance);
  Routing rows = routing;  // what each expert-TP rank computes after the all-gather
  for (double& t : rows.local_tokens) t *= static_cast<double>(etp);
  const MoeBlockKernels k = moe_block_kernels(m, shape, ep, etp, rows, run);
  // Shared experts run whole on the rank's own tokens: the ranks of an expert-TP group hold
  // different tokens, so their width is not split (etp = 1 for them).
  const MoeBlockKernels whole = moe_block_kernels(m, shape, ep, 1, routing);
  auto c = [&](const Kernels& ks) { return kernels_cost(ks, cm); };
  MoeBlockCosts out;
  out.pre_fwd = c(k.pre_fwd);
  out.router_fwd = c(k.router_fwd);
  out.experts_fwd = grouped_experts_cost(k.experts_fwd, cm, run.gemm_streams);
  out.experts_fwd_gemm_launches = out.experts_fwd.kernels;
  for (const KernelOp& op : k.experts_fwd)
    if (op.kind != KernelOp::Kind::kGemm) --out.experts_fwd_gemm_launches;
  out.shared_fwd = c(whole.shared_fwd);
  out.post_fwd = c(k.post_fwd);
  out.pre_bwd = c(k.pre_bwd);
  out.post_dgrad = c(k.post_dgrad);
  out.experts_dgrad = grouped_experts_cost(k.experts_dgrad, cm, run.gemm_streams);
  out.shared_dgrad = c(whole.shared_dgrad);
  out.router_dgrad = c(k.router_dgrad);
  out.wgrad = grouped_experts_cost(k.experts_wgrad, cm, run.gemm_streams);
  out.wgrad += c(whole.shared_wgrad);
  out.wgrad += c(k.router_wgrad);
  const uint32_t modules = shape.recompute_modules;
  if (modules & kRecomputeLayernorm)
    for (const KernelOp& op : k.pre_fwd)
      if (op.name.ends_with(".norm.fwd")) out.recompute += kernel_cost(op, cm);
  if (modules & kRecomputeMoeAct)
    for (const KernelOp& op : k.experts_fwd)
      if (op.name == "moe.experts.act.fwd" || op.name.starts_with("moe.experts.act_clamp_"))
        out.recompute += kernel_cost(op, cm);
  if (modules & kRecomputeSharedExperts) out.recompute += out.shared_fwd;
  const double row = static_cast<double>(routing.bytes_per_token.count());
  const double T = static_cast<double>(routing.tokens);
  const auto bytes = [](double b) {
    return sim::Bytes::checked(std::ceil(b), "MoE token dispatch",
                               "fewer tokens per micro-batch (micro_batch, seq_len) or a smaller ep");
  };
  if (run.dispatcher == MoeDispatcher::kAllGather) {
    // Hidden rows, plus in the forward the routing: fp32 probabilities and a bool map per expert.
    const double meta = static_cast<double>(m.moe->experts) * 5.0;
    const double epd = static_cast<double>(ep), all = static_cast<double>(ep * etp);
    if (ep > 1) {
      out.gather_ep = bytes(epd * T * row);
      out.gather_ep_fwd = bytes(epd * T * (row + meta));
    }
    if (etp > 1) {
      out.gather_etp = bytes(all * T * row);
      out.gather_etp_fwd = bytes(all * T * (row + meta));
    }
    return out;
  }
  out.a2a = routing.ep > 1 ? k.a2a_bytes : sim::Bytes(0);
  out.a2a_dispatch = out.a2a;
  if (run.dispatcher == MoeDispatcher::kFlex && ep > 1) {
    // Deduplicated bytes at the bottleneck level; the dispatch also carries each copy's top-k
    // indices (int64) and weights (fp32).
    const double f = flex_dedup_factor(m.moe->experts, m.moe->top_k, ep, run.ep_per_node);
    const double meta = static_cast<double>(m.moe->top_k) * 12.0 / row;
    out.a2a = bytes(static_cast<double>(k.a2a_bytes.count()) * f);
    out.a2a_dispatch = bytes(static_cast<double>(k.a2a_bytes.count()) * f * (1.0 + meta));
  }
  out.etp_rows = sim::Bytes::checked(routing.received_tokens * static_cast<double>(etp) * row, "MoE token dispatch",
                                     "fewer tokens per micro-batch (micro_batch, seq_len) or a smaller etp");
  return out;
}

}  // namespace trainsim::models::llm
