#include "models/llm/mla_kernels.hpp"

#include "sim/error.hpp"

namespace trainsim::models::llm {

namespace {
constexpr double kAct = 2;  // bytes per bf16/fp16 activation element
}  // namespace

AttentionInput mla_input_kernels(const ModelSpec& m, const LayerShape& s) {
  TRAINSIM_ASSERT(m.mla.has_value(), "mla_input_kernels: model ", m.name, " has no MLA");
  const MlaSpec& a = *m.mla;
  const int64_t T = s.micro_batch * s.seq_len;
  const int64_t Tn = s.sp ? T / s.tp : T;  // the down-projections run on the rank's sequence shard under SP
  const int64_t h = m.hidden, n = m.heads / s.tp, rope = a.qk_rope_head_dim;
  const int64_t qk = a.qk_head_dim(), kv_up = n * (a.qk_nope_head_dim + a.v_head_dim);
  const double Td = static_cast<double>(T), Tnd = static_cast<double>(Tn);
  AttentionInput in;
  Kernels dgrad;  // built in forward order, reversed at the end
  if (a.q_lora_rank) {
    const int64_t rq = *a.q_lora_rank;
    in.fwd = {forward_gemm("attn.q_down", Tn, rq, h),
              memory_kernel("attn.q_norm.fwd", Tnd * static_cast<double>(rq) * 2 * kAct),
              forward_gemm("attn.q_up", T, n * qk, rq)};
    dgrad = {dgrad_gemm("attn.q_down", Tn, rq, h),
             memory_kernel("attn.q_norm.bwd", Tnd * static_cast<double>(rq) * 4 * kAct),
             dgrad_gemm("attn.q_up", T, n * qk, rq)};
    in.wgrad = {wgrad_gemm("attn.q_down", Tn, rq, h), wgrad_gemm("attn.q_up", T, n * qk, rq)};
  } else {
    in.fwd = {forward_gemm("attn.q", T, n * qk, h)};
    dgrad = {dgrad_gemm("attn.q", T, n * qk, h)};
    in.wgrad = {wgrad_gemm("attn.q", T, n * qk, h)};
  }
  const int64_t rkv = a.kv_lora_rank;
  const double kv_norm = Tnd * static_cast<double>(rkv);
  in.fwd.push_back(forward_gemm("attn.kv_down", Tn, rkv + rope, h));
  in.fwd.push_back(memory_kernel("attn.kv_norm.fwd", kv_norm * 2 * kAct));
  in.fwd.push_back(forward_gemm("attn.kv_up", T, kv_up, rkv));
  dgrad.push_back(dgrad_gemm("attn.kv_down", Tn, rkv + rope, h));
  dgrad.push_back(memory_kernel("attn.kv_norm.bwd", kv_norm * 4 * kAct));
  dgrad.push_back(dgrad_gemm("attn.kv_up", T, kv_up, rkv));
  in.wgrad.push_back(wgrad_gemm("attn.kv_down", Tn, rkv + rope, h));
  in.wgrad.push_back(wgrad_gemm("attn.kv_up", T, kv_up, rkv));
  // RoPE reads and writes the local heads' query rope parts and the shared RoPE key; the key
  // concatenation reads the nope keys and the broadcast RoPE key and writes n x qk per token.
  const double rope_bytes = Td * static_cast<double>(n * rope + rope) * 2 * kAct;
  const double concat_bytes = Td * static_cast<double>(n * qk) * 2 * kAct;
  in.fwd.push_back(memory_kernel("attn.rope.fwd", rope_bytes));
  in.fwd.push_back(memory_kernel("attn.k_concat.fwd", concat_bytes));
  dgrad.push_back(memory_kernel("attn.rope.bwd", rope_bytes));
  dgrad.push_back(memory_kernel("attn.k_concat.bwd", concat_bytes));
  in.dgrad.assign(dgrad.rbegin(), dgrad.rend());
  return in;
}

}  // namespace trainsim::models::llm
