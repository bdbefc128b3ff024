#include "models/llm/eager_ops.hpp"

#include <string>
#include <string_view>

namespace trainsim::models::llm {

namespace {

struct Expansion {
  const char* suffix;
  double factor;  // bytes against the fused kernel's
  int kernels;
};

// The ratios of the header's per-element byte counts (eager / fused) and the eager op counts.
constexpr Expansion kExpansions[] = {
    {".norm.fwd", 36.0 / 4.0, 8},
    {".norm.bwd", 64.0 / 8.0, 11},
    {"rope.fwd", 20.0 / 4.0, 6},
    {"rope.bwd", 20.0 / 4.0, 6},
    {"mlp.act.fwd", 10.0 / 6.0, 2},
    {"mlp.act.bwd", 18.0 / 10.0, 3},
    {"qk_norm.fwd", 36.0 / 4.0, 8},
    {"qk_norm.bwd", 64.0 / 8.0, 11},
    // The loss over the logits (fused: three 4-byte passes forward, 6 bytes backward): the cast to
    // fp32, log-softmax's 16 bytes, nll_loss's row gathers; backward 26 bytes in 4 kernels.
    {"head.loss_max.fwd", 6.0 / 4.0, 1},
    {"head.loss_sum.fwd", 16.0 / 4.0, 1},
    {"head.loss.fwd", 0.0, 1},
    {"head.loss.bwd", 26.0 / 6.0, 4},
};

bool is_loss(const char* suffix) { return std::string_view(suffix).starts_with("head.loss"); }

// `norms`: expand the element-wise ops of the blocks and the final norm; `loss`: the loss's.
Kernels expanded(const Kernels& ks, bool norms = true, bool loss = true) {
  Kernels out;
  for (const KernelOp& k : ks) {
    const Expansion* e = nullptr;
    if (k.kind == KernelOp::Kind::kMemory)
      for (const Expansion& x : kExpansions)
        if (k.name.ends_with(x.suffix) && (is_loss(x.suffix) ? loss : norms)) {
          e = &x;
          break;
        }
    if (!e) {
      out.push_back(k);
      continue;
    }
    for (int i = 0; i < e->kernels; ++i) out.push_back(memory_kernel(k.name, k.bytes * e->factor / e->kernels));
  }
  return out;
}

void expand_block(BlockKernels& b) {
  for (Kernels* ks : {&b.pre_fwd, &b.main_fwd, &b.pre_bwd, &b.main_dgrad, &b.selective_recompute}) *ks = expanded(*ks);
}

}  // namespace

void expand_eager_ops(LayerKernels& k, const ModelSpec& m, const LayerShape& s) {
  expand_block(k.attn);
  expand_block(k.mlp);
  if (m.mla || m.kv_heads_or_heads() >= m.heads) return;
  // repeat_kv: read the rank's keys and values, write them once per query head; backward sums the
  // copies back (read them all, write the grouped gradient).
  const double T = static_cast<double>(s.micro_batch * s.seq_len), t = static_cast<double>(s.tp);
  const double grouped = static_cast<double>(m.kv_width()) / t;
  const double expanded_kv = 2.0 * static_cast<double>(m.heads * m.head_dim()) / t;
  const double bytes = T * (grouped + expanded_kv) * 2.0;
  auto at = [](Kernels& ks, KernelOp::Kind kind) {
    for (auto it = ks.begin(); it != ks.end(); ++it)
      if (it->kind == kind) return it;
    return ks.end();
  };
  Kernels& fwd = k.attn.main_fwd;
  if (auto core = at(fwd, KernelOp::Kind::kAttentionFwd); core != fwd.end())
    fwd.insert(core, memory_kernel("attn.repeat_kv.fwd", bytes));
  Kernels& bwd = k.attn.main_dgrad;
  if (auto core = at(bwd, KernelOp::Kind::kAttentionBwd); core != bwd.end())
    bwd.insert(core + 1, memory_kernel("attn.repeat_kv.bwd", bytes));
}

void expand_eager_ops(Kernels& ks, bool final_norm, bool loss) { ks = expanded(ks, final_norm, loss); }

}  // namespace trainsim::models::llm
