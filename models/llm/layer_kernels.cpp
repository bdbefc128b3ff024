#include "models/llm/layer_kernels.hpp"

#include "models/llm/eager_ops.hpp"
#include "models/llm/mla_kernels.hpp"
#include "models/llm/recompute_modules.hpp"

namespace trainsim::models::llm {

namespace {
using compute::GemmShape;
using Kind = KernelOp::Kind;

// Bytes per element of bf16/fp16 activations.
constexpr int64_t kAct = 2;

KernelOp attention(std::string name, Kind kind, double flops) {
  KernelOp op;
  op.kind = kind;
  op.name = std::move(name);
  op.flops = flops;
  return op;
}
void append(Kernels& to, const Kernels& from) { to.insert(to.end(), from.begin(), from.end()); }

// Fused QKV GEMM, then QK-norm (per-head RMSNorm of the local query and key heads) and the rotary
// embedding, each reading and writing the local query and key heads.
AttentionInput qkv_kernels(const ModelSpec& m, const LayerShape& s) {
  const int64_t T = s.micro_batch * s.seq_len, tp = s.tp;
  const int64_t kvd = m.kv_heads_or_heads() * m.head_dim();
  const int64_t qkv_n = (m.q_width() + 2 * kvd) / tp;
  const double qk_bytes = static_cast<double>(T) * static_cast<double>(m.q_width() + kvd) / static_cast<double>(tp);
  AttentionInput in;
  in.fwd = {forward_gemm("attn.qkv", T, qkv_n, m.hidden)};
  in.wgrad = {wgrad_gemm("attn.qkv", T, qkv_n, m.hidden)};
  if (m.qk_norm) in.fwd.push_back(memory_kernel("attn.qk_norm.fwd", qk_bytes * 2 * kAct));
  if (m.position == "rope") {
    in.fwd.push_back(memory_kernel("attn.rope.fwd", qk_bytes * 2 * kAct));
    in.dgrad.push_back(memory_kernel("attn.rope.bwd", qk_bytes * 2 * kAct));
  }
  // Backward: read the gradient and the saved input, write the input gradient.
  if (m.qk_norm) in.dgrad.push_back(memory_kernel("attn.qk_norm.bwd", qk_bytes * 3 * kAct));
  in.dgrad.push_back(dgrad_gemm("attn.qkv", T, qkv_n, m.hidden));
  return in;
}

// Forward FLOPs of the fused causal attention core on one rank: QK^T over the qk width and PV
// over the v width, for the (query, key) pairs the causal mask (and a local layer's window) keeps.
double attention_core_flops(const ModelSpec& m, const LayerShape& s) {
  const double b = static_cast<double>(s.micro_batch), sq = static_cast<double>(s.seq_len);
  const double cp = static_cast<double>(s.cp), tp = static_cast<double>(s.tp);
  const double qv = 0.5 * static_cast<double>(m.q_width() + m.v_width());  // = q_width without MLA
  const int64_t seq = s.seq_len * s.cp;
  // Causal FlashAttention skips the masked half: QK^T and PV at 2*b*s^2*h/tp each, halved. With
  // context parallelism each rank holds sq = seq/cp queries against all seq keys, half masked.
  if (s.window <= 0 || s.window >= seq) return 2.0 * b * sq * sq * cp * qv / tp;
  // A local layer: 2 GEMMs x 2 FLOPs per multiply-add over the windowed pairs, 1/cp of them per rank.
  return 4.0 * b * windowed_causal_pairs(seq, s.window) / cp * qv / tp;
}
}  // namespace

LayerShape layer_shape(const ModelSpec& m, LayerShape s, int64_t layer) {
  s.window = m.is_local_layer(layer) ? m.attention_window->size : 0;
  return s;
}

KernelOp gemm_kernel(std::string name, GemmLayout layout, int64_t m, int64_t n, int64_t k, int64_t batch) {
  KernelOp op;
  op.kind = Kind::kGemm;
  op.name = std::move(name);
  op.gemm = GemmShape{m, n, k, batch};
  op.layout = layout;
  op.flops = op.gemm.flops().count();
  return op;
}
// Forward Y[m,n] = X[m,k] W^T; its backward GEMMs: dX = dY W is [m,k] over n; dW = dY^T X is [n,k]
// over m (counted as C[k,n] over m, the same FLOPs and tiles).
KernelOp forward_gemm(const std::string& name, int64_t m, int64_t n, int64_t k, int64_t batch) {
  return gemm_kernel(name + ".fwd", GemmLayout::kTN, m, n, k, batch);
}
KernelOp dgrad_gemm(const std::string& name, int64_t m, int64_t n, int64_t k, int64_t batch) {
  return gemm_kernel(name + ".dgrad", GemmLayout::kNN, m, k, n, batch);
}
KernelOp wgrad_gemm(const std::string& name, int64_t m, int64_t n, int64_t k, int64_t batch) {
  return gemm_kernel(name + ".wgrad", GemmLayout::kNT, k, n, m, batch);
}
KernelOp memory_kernel(std::string name, double bytes) {
  KernelOp op;
  op.kind = Kind::kMemory;
  op.name = std::move(name);
  op.bytes = bytes;
  return op;
}

void append_glu_clamp(Kernels& fwd, Kernels& bwd, const std::string& prefix, double elems) {
  fwd.push_back(memory_kernel(prefix + ".act_clamp_gate.fwd", elems * 2 * kAct));
  fwd.push_back(memory_kernel(prefix + ".act_clamp_linear.fwd", elems * 2 * kAct));
  fwd.push_back(memory_kernel(prefix + ".act_clamp_cat.fwd", elems * 4 * kAct));
  bwd.push_back(memory_kernel(prefix + ".act_clamp_cat.bwd", elems * 4 * kAct));
  bwd.push_back(memory_kernel(prefix + ".act_clamp_gate.bwd", elems * 3 * kAct));
  bwd.push_back(memory_kernel(prefix + ".act_clamp_linear.bwd", elems * 3 * kAct));
}

const char* to_string(GemmLayout l) {
  switch (l) {
    case GemmLayout::kTN: return "TN";
    case GemmLayout::kNN: return "NN";
    case GemmLayout::kNT: return "NT";
  }
  return "?";
}

LayerKernels layer_kernels(const ModelSpec& m, const LayerShape& s) {
  const int64_t b = s.micro_batch, sq = s.seq_len, tp = s.tp;
  const int64_t T = b * sq;              // tokens in a micro-batch
  const int64_t Tn = s.sp ? T / tp : T;  // tokens seen by norms / dropout / residual
  const int64_t h = m.hidden;
  const int64_t heads_local = m.heads / tp;
  const int64_t f = m.ffn_hidden;
  const int64_t gates = m.activation == "swiglu" ? 2 : 1;
  const double Td = static_cast<double>(T), Tnd = static_cast<double>(Tn), hd = static_cast<double>(h);
  const double drop = m.dropout ? 1.0 : 0.0;

  LayerKernels out;
  out.tp_comm_bytes = sim::Bytes(T * h * kAct);
  for (int blk = 0; blk < 2; ++blk) {
    const std::string p = blk == 0 ? "attn" : "mlp";
    BlockKernels& k = blk == 0 ? out.attn : out.mlp;
    // Residual add (+ fused bias-dropout): read x and residual, write the sum (+ mask); then the
    // norm reads the sum and writes its output.
    k.pre_fwd = {memory_kernel(p + ".residual.fwd", Tnd * hd * (3 * kAct + drop)),
                 memory_kernel(p + ".norm.fwd", Tnd * hd * 2 * kAct)};
    // Backward: the norm reads the gradient and its saved input and writes the input gradient
    // (plus a reduction pass over the weight gradient); the residual adds two gradient streams.
    k.pre_bwd = {memory_kernel(p + ".norm.bwd", Tnd * hd * 4 * kAct),
                 memory_kernel(p + ".residual.bwd", Tnd * hd * (3 * kAct + drop))};
  }

  // ---- attention block ----
  BlockKernels& a = out.attn;
  const AttentionInput in = m.mla ? mla_input_kernels(m, s) : qkv_kernels(m, s);
  a.main_fwd = in.fwd;
  const int64_t dqk = m.qk_head_dim(), dv = m.v_head_dim(), vw = m.v_width();
  Kernels core_fwd, core_bwd;
  if (s.flash) {
    const double f_fwd = attention_core_flops(m, s);
    core_fwd = {attention("attn.core.fwd", Kind::kAttentionFwd, f_fwd)};
    // Backward recomputes S and P and forms dQ, dK, dV, dP: 2.5x the forward matmul work.
    core_bwd = {attention("attn.core.bwd", Kind::kAttentionBwd, 2.5 * f_fwd)};
  } else {
    // Megatron 2021: batched GEMMs over the full s x s score matrix, fused scale-mask-softmax,
    // dropout on the probabilities.
    const int64_t batch = b * heads_local;
    const double elems = static_cast<double>(batch) * static_cast<double>(sq) * static_cast<double>(sq);
    core_fwd = {forward_gemm("attn.scores", sq, sq, dqk, batch), memory_kernel("attn.softmax.fwd", elems * (2 * kAct))};
    if (m.dropout) core_fwd.push_back(memory_kernel("attn.dropout.fwd", elems * (2 * kAct + 1)));
    core_fwd.push_back(forward_gemm("attn.context", sq, dv, sq, batch));
    core_bwd = {dgrad_gemm("attn.context", sq, dv, sq, batch), wgrad_gemm("attn.context", sq, dv, sq, batch)};
    if (m.dropout) core_bwd.push_back(memory_kernel("attn.dropout.bwd", elems * (2 * kAct + 1)));
    core_bwd.push_back(memory_kernel("attn.softmax.bwd", elems * (3 * kAct)));
    core_bwd.push_back(dgrad_gemm("attn.scores", sq, sq, dqk, batch));
    core_bwd.push_back(wgrad_gemm("attn.scores", sq, sq, dqk, batch));
    a.selective_recompute = core_fwd;
  }
  append(a.main_fwd, core_fwd);
  a.main_fwd.push_back(forward_gemm("attn.proj", T, h, vw / tp));
  // Backward in reverse: projection input gradient, attention core, then the input projections'.
  a.main_dgrad = {dgrad_gemm("attn.proj", T, h, vw / tp)};
  append(a.main_dgrad, core_bwd);
  append(a.main_dgrad, in.dgrad);
  a.main_wgrad = {wgrad_gemm("attn.proj", T, h, vw / tp)};
  append(a.main_wgrad, in.wgrad);

  // ---- MLP block ----
  BlockKernels& p = out.mlp;
  const int64_t f_local = f / tp;
  const double act_elems = Td * static_cast<double>(f_local);
  Kernels clamp_fwd, clamp_bwd;
  if (m.activation_clamp) append_glu_clamp(clamp_fwd, clamp_bwd, "mlp", act_elems);
  p.main_fwd = {forward_gemm("mlp.fc1", T, gates * f_local, h)};
  append(p.main_fwd, clamp_fwd);
  p.main_fwd.push_back(memory_kernel("mlp.act.fwd", act_elems * kAct * (gates + 1)));  // read gate(s), write output
  p.main_fwd.push_back(forward_gemm("mlp.fc2", T, h, f_local));
  p.main_dgrad = {
      dgrad_gemm("mlp.fc2", T, h, f_local),
      memory_kernel("mlp.act.bwd", act_elems * kAct * (1 + 2 * gates))};  // read grad + inputs, write input grads
  append(p.main_dgrad, clamp_bwd);
  p.main_dgrad.push_back(dgrad_gemm("mlp.fc1", T, gates * f_local, h));
  p.main_wgrad = {wgrad_gemm("mlp.fc2", T, h, f_local), wgrad_gemm("mlp.fc1", T, gates * f_local, h)};
  if (s.eager_elementwise) expand_eager_ops(out, m, s);
  if (s.recompute_modules & kRecomputeOps) {
    out.attn.module_recompute = op_checkpoint_kernels(m, s, out.attn, true);
    out.mlp.module_recompute = op_checkpoint_kernels(m, s, out.mlp, false);
  } else if (s.recompute_modules != 0) {
    out.attn.module_recompute = module_recompute_kernels(out.attn, true, s.recompute_modules);
    out.mlp.module_recompute = module_recompute_kernels(out.mlp, false, s.recompute_modules);
  }
  return out;
}

EdgeKernels edge_kernels(const ModelSpec& m, const LayerShape& s) {
  const int64_t T = s.micro_batch * s.seq_len;
  const int64_t h = m.hidden;
  const int64_t v_local = (m.vocab + s.tp - 1) / s.tp;
  const double Th = static_cast<double>(T) * static_cast<double>(h);
  const double logits = static_cast<double>(T) * static_cast<double>(v_local);
  EdgeKernels e;
  // Embedding lookup: gather rows (read + write), then the learned position table add (or a
  // second pass over the output).
  e.embed_fwd = {memory_kernel("embed.gather.fwd", Th * 2 * kAct),
                 memory_kernel("embed.position.fwd", m.position == "learned" ? Th * 3 * kAct : 0.0)};
  // Backward: scatter-add token gradients into the fp32 embedding gradient rows.
  e.embed_bwd = {memory_kernel("embed.scatter.bwd", Th * (kAct + 8) / 2),
                 memory_kernel("embed.reduce.bwd", Th * (kAct + 8) / 2)};
  // Final norm, LM head GEMM, vocab-parallel cross-entropy in fp32 (max, exp-sum, loss passes
  // over the logits: about 12 bytes per logit), and its backward (softmax - one-hot: read 4, write 2).
  auto head = [&](KernelOp k) {
    k.sixteen_bit = !s.fp8_head;
    return k;
  };
  e.head_fwd = {memory_kernel("head.norm.fwd", Th * 2 * kAct), head(forward_gemm("head.logits", T, v_local, h)),
                memory_kernel("head.loss_max.fwd", logits * 4), memory_kernel("head.loss_sum.fwd", logits * 4),
                memory_kernel("head.loss.fwd", logits * 4)};
  e.head_dgrad = {memory_kernel("head.loss.bwd", logits * 6), head(dgrad_gemm("head.logits", T, v_local, h)),
                  memory_kernel("head.norm.bwd", Th * 5 * kAct)};
  e.head_wgrad = {head(wgrad_gemm("head.logits", T, v_local, h))};
  const bool norm = s.eager_elementwise || s.eager_final_norm, loss = s.eager_elementwise || s.eager_loss;
  expand_eager_ops(e.head_fwd, norm, loss);
  expand_eager_ops(e.head_dgrad, norm, loss);
  if (m.mtp_layers > 0) {
    const int64_t h_local = h / s.tp;
    e.mtp_fwd = {memory_kernel("mtp.embed.fwd", Th * 2 * kAct), memory_kernel("mtp.norms.fwd", Th * 2 * 2 * kAct),
                 forward_gemm("mtp.proj", T, h_local, 2 * h)};
    e.mtp_dgrad = {dgrad_gemm("mtp.proj", T, h_local, 2 * h), memory_kernel("mtp.norms.bwd", Th * 2 * 4 * kAct),
                   memory_kernel("mtp.embed.bwd", Th * (kAct + 8))};
    e.mtp_wgrad = {wgrad_gemm("mtp.proj", T, h_local, 2 * h)};
  }
  return e;
}

Kernels layer_sequence(const LayerKernels& k) {
  Kernels seq;
  for (const BlockKernels* b : {&k.attn, &k.mlp}) {
    append(seq, b->pre_fwd);
    append(seq, b->main_fwd);
  }
  for (const BlockKernels* b : {&k.mlp, &k.attn}) {
    append(seq, b->main_dgrad);
    append(seq, b->main_wgrad);
    append(seq, b->pre_bwd);
  }
  return seq;
}

}  // namespace trainsim::models::llm
