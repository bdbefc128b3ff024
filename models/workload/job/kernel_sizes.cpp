#include "models/workload/job/kernel_sizes.hpp"

#include <algorithm>
#include <vector>

#include "models/llm/layer_kernels.hpp"
#include "models/llm/moe.hpp"
#include "models/workload/job/moe_options.hpp"

namespace trainsim::models::workload {

namespace {

constexpr double kGemmFlopShare = 0.95;  // the largest GEMMs doing this share of the FLOPs set the spans
constexpr double kActivationBytes = 2;   // 16-bit activations and gathered parameters

// A GEMM and how many times an iteration's micro-batch runs it on the rank (the layers that have it).
struct Weighted {
  compute::GemmShape shape;
  double count = 1;
  double flops() const { return shape.flops().count() * count; }
};

void add_gemms(const llm::Kernels& ks, double count, std::vector<Weighted>& out) {
  for (const auto& k : ks)
    if (k.kind == llm::KernelOp::Kind::kGemm) out.push_back(Weighted{k.gemm, count});
}

void add_block(const llm::BlockKernels& b, double count, std::vector<Weighted>& out) {
  for (const llm::Kernels* ks : {&b.pre_fwd, &b.main_fwd, &b.pre_bwd, &b.main_dgrad, &b.main_wgrad})
    add_gemms(*ks, count, out);
}

// One rank's GEMMs for one micro-batch: the attention block of every layer, the dense MLPs, the
// MoE blocks and the LM head.
std::vector<Weighted> gemms(const Job& j) {
  llm::LayerShape shape{j.micro_batch, j.seq_len / j.cp,           j.tp, j.sp, j.attention == Attention::kFlash,
                        j.cp,          j.stack.kernels.fp8_lm_head};
  std::vector<Weighted> out;
  const llm::LayerKernels lk = llm::layer_kernels(j.model, shape);
  const auto moe = static_cast<double>(j.model.moe_layers());
  const double dense = static_cast<double>(j.model.layers) - moe;
  add_block(lk.attn, dense + moe, out);
  if (dense > 0) add_block(lk.mlp, dense, out);
  if (moe > 0) {
    const int64_t tokens = j.micro_batch * shape.seq_len / (j.sp ? j.tp : 1);
    const llm::MoeRun run = moe_run(j);
    llm::Routing rows = llm::route_tokens(j.model, j.ep, tokens, run.balance);
    for (double& t : rows.local_tokens) t *= static_cast<double>(j.etp);
    const llm::MoeBlockKernels k = llm::moe_block_kernels(j.model, shape, j.ep, j.etp, rows, run);
    for (const llm::Kernels* ks :
         {&k.router_fwd, &k.experts_fwd, &k.shared_fwd, &k.post_dgrad, &k.experts_dgrad, &k.experts_wgrad,
          &k.shared_dgrad, &k.shared_wgrad, &k.router_dgrad, &k.router_wgrad})
      add_gemms(*ks, moe, out);
  }
  const llm::EdgeKernels ek = llm::edge_kernels(j.model, shape);
  for (const llm::Kernels* ks : {&ek.head_fwd, &ek.head_dgrad, &ek.head_wgrad}) add_gemms(*ks, 1, out);
  return out;
}

}  // namespace

KernelSizes kernel_sizes(const Job& j) {
  KernelSizes s;
  std::vector<Weighted> g = gemms(j);
  std::stable_sort(g.begin(), g.end(), [](const auto& a, const auto& b) { return a.flops() > b.flops(); });
  double total = 0, kept = 0;
  for (const auto& x : g) total += x.flops();
  for (const auto& x : g) {
    if (kept >= kGemmFlopShare * total) break;
    kept += x.flops();
    stack::extend(s.gemm_m, static_cast<double>(x.shape.m));
    stack::extend(s.gemm_n, static_cast<double>(x.shape.n));
    stack::extend(s.gemm_k, static_cast<double>(x.shape.k));
  }

  const auto& m = j.model;
  const double tokens = static_cast<double>(j.micro_batch * (j.seq_len / j.cp));
  const double hidden = static_cast<double>(m.hidden);
  if (j.tp > 1) stack::extend(s.message_bytes, tokens * hidden * kActivationBytes);
  if (j.pp > 1)
    stack::extend(s.message_bytes, tokens * hidden * kActivationBytes / (j.sp ? static_cast<double>(j.tp) : 1.0));
  if (j.cp > 1)
    stack::extend(s.message_bytes, tokens * 2.0 * static_cast<double>(m.kv_heads_or_heads() * m.head_dim()) *
                                       kActivationBytes / static_cast<double>(j.tp));
  if (j.ep > 1 && m.moe) {
    const int64_t routed = j.micro_batch * (j.seq_len / j.cp) / (j.sp ? j.tp : 1);
    stack::extend(s.message_bytes, llm::route_tokens(m, j.ep, routed, moe_run(j).balance).dispatch_send.count());
  }
  if (j.dp_cp() > 1) {
    const double layer = j.rank_layer_params(0);
    if (j.zero >= 3) {
      stack::extend(s.message_bytes, layer * kActivationBytes);
    } else {
      const double grad = j.precision == compute::Precision::kFp16 ? 2.0 : j.stack.memory.main_grad_bytes;
      // Buckets fill layer by layer up to bucket_size (0: one layer each), at most a stage.
      const double bucket = static_cast<double>(j.bucket_size.count());
      const double stage = layer * grad * static_cast<double>(j.stage_layers(0));
      stack::extend(s.message_bytes, bucket > 0 ? std::min(stage, std::max(bucket, layer * grad)) : layer * grad);
    }
  }
  return s;
}

}  // namespace trainsim::models::workload
