#include "models/llm/layer_ops.hpp"

namespace trainsim::models::llm {

namespace {
using compute::GemmShape;
using sim::Bytes;
using sim::Flops;

// Bytes per element of bf16/fp16 activations.
constexpr int64_t kAct = 2;

Cost gemm(const compute::ComputeModel& cm, int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  const GemmShape s{m, n, k, batch};
  return Cost{cm.gemm(s), s.flops(), 1};
}
// Backward GEMMs of Y[m,n] = X[m,k] W[k,n]: dX = dY W^T is [m,k] over n; dW = X^T dY is [k,n] over m.
Cost dgrad(const compute::ComputeModel& cm, int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  return gemm(cm, m, k, n, batch);
}
Cost wgrad(const compute::ComputeModel& cm, int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  return gemm(cm, k, n, m, batch);
}
Cost mem(const compute::ComputeModel& cm, double bytes, int kernels = 1) {
  return Cost{cm.memory_bound(Bytes(static_cast<int64_t>(bytes)), kernels), Flops(), kernels};
}
}  // namespace

LayerCosts layer_costs(const ModelSpec& m, const LayerShape& s, const compute::ComputeModel& cm) {
  const int64_t b = s.micro_batch, sq = s.seq_len, tp = s.tp;
  const int64_t T = b * sq;              // tokens in a micro-batch
  const int64_t Tn = s.sp ? T / tp : T;  // tokens seen by norms / dropout / residual
  const int64_t h = m.hidden, d = m.head_dim();
  const int64_t kvd = m.kv_heads_or_heads() * d;
  const int64_t heads_local = m.heads / tp;
  const int64_t f = m.ffn_hidden;
  const int64_t gates = m.activation == "swiglu" ? 2 : 1;
  const double Td = static_cast<double>(T), Tnd = static_cast<double>(Tn), hd = static_cast<double>(h);
  const double drop = m.dropout ? 1.0 : 0.0;

  // Residual add (+ fused bias-dropout) and norm: read x and residual, write sum (+ mask), then
  // the norm reads the sum and writes its output.
  const double bda_bytes = Tnd * hd * (3 * kAct + drop);
  const double norm_bytes = Tnd * hd * 2 * kAct;
  const Cost pre_fwd = mem(cm, bda_bytes + norm_bytes, 2);
  // Backward: norm reads grad + saved input, writes grad (plus a reduction pass); residual grad
  // adds two streams; dropout reads its mask.
  const Cost pre_bwd = mem(cm, Tnd * hd * (7 * kAct + drop), 2);

  LayerCosts out;
  out.tp_comm_bytes = Bytes(T * h * kAct);

  // ---- attention block ----
  BlockCosts& a = out.attn;
  a.pre_fwd = pre_fwd;
  a.pre_bwd = pre_bwd;
  const int64_t qkv_n = (h + 2 * kvd) / tp;
  a.main_fwd = gemm(cm, T, qkv_n, h);
  a.main_dgrad = dgrad(cm, T, qkv_n, h);
  a.main_wgrad = wgrad(cm, T, qkv_n, h);
  if (m.position == "rope") {
    const double rope_bytes = Td * static_cast<double>(h + kvd) / static_cast<double>(tp) * 2 * kAct;
    a.main_fwd += mem(cm, rope_bytes);
    a.main_dgrad += mem(cm, rope_bytes);
  }
  Cost core_fwd, core_bwd;
  if (s.flash) {
    // Causal FlashAttention skips the masked half: QK^T and PV at 2*b*s^2*h/tp each, halved.
    const double fwd =
        2.0 * static_cast<double>(b) * static_cast<double>(sq) * static_cast<double>(sq) * hd / static_cast<double>(tp);
    core_fwd = Cost{cm.flash_attention(Flops(fwd)), Flops(fwd), 1};
    // Backward recomputes S and P and forms dQ, dK, dV, dP: 2.5x the forward matmul work.
    core_bwd = Cost{cm.flash_attention(Flops(2.5 * fwd)), Flops(2.5 * fwd), 1};
  } else {
    // Megatron 2021: batched GEMMs over the full s x s score matrix, fused scale-mask-softmax,
    // dropout on the probabilities.
    const int64_t batch = b * heads_local;
    const double elems = static_cast<double>(batch) * static_cast<double>(sq) * static_cast<double>(sq);
    core_fwd = gemm(cm, sq, sq, d, batch);    // S = Q K^T
    core_fwd += mem(cm, elems * (2 * kAct));  // softmax(scale * S + mask)
    if (m.dropout) core_fwd += mem(cm, elems * (2 * kAct + 1));
    core_fwd += gemm(cm, sq, d, sq, batch);   // O = P V
    core_bwd = dgrad(cm, sq, d, sq, batch);   // dP = dO V^T
    core_bwd += wgrad(cm, sq, d, sq, batch);  // dV = P^T dO
    if (m.dropout) core_bwd += mem(cm, elems * (2 * kAct + 1));
    core_bwd += mem(cm, elems * (3 * kAct));  // softmax backward
    core_bwd += dgrad(cm, sq, sq, d, batch);  // dQ = dS K
    core_bwd += wgrad(cm, sq, sq, d, batch);  // dK = dS^T Q
    a.selective_recompute = core_fwd;
  }
  a.main_fwd += core_fwd;
  a.main_dgrad += core_bwd;
  a.main_fwd += gemm(cm, T, h, h / tp);  // output projection
  a.main_dgrad += dgrad(cm, T, h, h / tp);
  a.main_wgrad += wgrad(cm, T, h, h / tp);

  // ---- MLP block ----
  BlockCosts& p = out.mlp;
  p.pre_fwd = pre_fwd;
  p.pre_bwd = pre_bwd;
  const int64_t f_local = f / tp;
  const double act_elems = Td * static_cast<double>(f_local);
  p.main_fwd = gemm(cm, T, gates * f_local, h);
  p.main_fwd += mem(cm, act_elems * kAct * (gates + 1));  // activation: read gate(s), write output
  p.main_fwd += gemm(cm, T, h, f_local);
  p.main_dgrad = dgrad(cm, T, h, f_local);
  p.main_dgrad += mem(cm, act_elems * kAct * (1 + 2 * gates));  // read grad + inputs, write input grads
  p.main_dgrad += dgrad(cm, T, gates * f_local, h);
  p.main_wgrad = wgrad(cm, T, h, f_local);
  p.main_wgrad += wgrad(cm, T, gates * f_local, h);
  return out;
}

EdgeCosts edge_costs(const ModelSpec& m, const LayerShape& s, const compute::ComputeModel& cm) {
  const int64_t T = s.micro_batch * s.seq_len;
  const int64_t h = m.hidden;
  const int64_t v_local = (m.vocab + s.tp - 1) / s.tp;
  const double Th = static_cast<double>(T) * static_cast<double>(h);
  const double logits = static_cast<double>(T) * static_cast<double>(v_local);
  EdgeCosts e;
  // Embedding lookup: gather rows (read + write), plus a learned position table add.
  e.embed_fwd = mem(cm, Th * 2 * kAct + (m.position == "learned" ? Th * 3 * kAct : 0.0), 2);
  // Backward: scatter-add token gradients into the fp32 embedding gradient rows.
  e.embed_bwd = mem(cm, Th * (kAct + 8), 2);
  // Final norm, LM head GEMM, vocab-parallel cross-entropy in fp32 (max, exp-sum, loss passes
  // over the logits: about 12 bytes per logit), and its backward (softmax - one-hot: read 4, write 2).
  e.head_fwd = mem(cm, Th * 2 * kAct);
  e.head_fwd += gemm(cm, T, v_local, h);
  e.head_fwd += mem(cm, logits * 12, 3);
  e.head_dgrad = mem(cm, logits * 6);
  e.head_dgrad += dgrad(cm, T, v_local, h);
  e.head_dgrad += mem(cm, Th * 5 * kAct);
  e.head_wgrad = wgrad(cm, T, v_local, h);
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
