#pragma once
// Native CUDA kernels the validator uses to replay a transformer layer on a real GPU (sm_80+,
// tuned for H100). Host-callable launch functions: every pointer is a device pointer, every
// function enqueues its kernel(s) on `stream` and returns the first launch error
// (cudaGetLastError after each launch; cudaErrorInvalidValue for sizes it does not support);
// nothing synchronizes. Tensors are dense and row-major; bf16 = __nv_bfloat16. Math is done in
// fp32 (reductions included). Pointers of distinct arguments must not overlap unless a function
// says otherwise. Formulas, launch configurations and error bounds: docs/kernels.md.

#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace trainsim::kernels {

using bf16 = __nv_bfloat16;

// ---- RMSNorm ---------------------------------------------------------------------------------
// x, y: [rows, hidden]; weight: [hidden]; rstd: [rows] fp32 (saved for the backward).
//   rstd[r] = 1 / sqrt(mean_c(x[r,c]^2) + eps);  y[r,c] = x[r,c] * rstd[r] * weight[c].
cudaError_t rmsnorm_fwd(const bf16* x, const bf16* weight, bf16* y, float* rstd, int64_t rows, int hidden, float eps,
                        cudaStream_t stream);
// dy, x, dx: [rows, hidden]; dweight: [hidden] fp32, overwritten (zeroed, then accumulated with
// fp32 atomics from per-block partial sums). With xh = x*rstd, g = dy*weight:
//   dx = rstd * (g - xh * mean_c(g*xh));  dweight[c] = sum_r dy[r,c] * xh[r,c].
cudaError_t rmsnorm_bwd(const bf16* dy, const bf16* x, const bf16* weight, const float* rstd, bf16* dx, float* dweight,
                        int64_t rows, int hidden, cudaStream_t stream);

// ---- LayerNorm -------------------------------------------------------------------------------
// x, y: [rows, hidden]; weight, bias: [hidden]; mean, rstd: [rows] fp32.
//   mean = mean_c(x);  rstd = 1 / sqrt(mean_c((x-mean)^2) + eps);  y = (x-mean)*rstd*weight + bias.
cudaError_t layernorm_fwd(const bf16* x, const bf16* weight, const bf16* bias, bf16* y, float* mean, float* rstd,
                          int64_t rows, int hidden, float eps, cudaStream_t stream);
// dweight, dbias: [hidden] fp32, overwritten. With xh = (x-mean)*rstd, g = dy*weight:
//   dx = rstd * (g - mean_c(g) - xh * mean_c(g*xh));  dweight = sum_r dy*xh;  dbias = sum_r dy.
cudaError_t layernorm_bwd(const bf16* dy, const bf16* x, const bf16* weight, const float* mean, const float* rstd,
                          bf16* dx, float* dweight, float* dbias, int64_t rows, int hidden, cudaStream_t stream);

// ---- SwiGLU ----------------------------------------------------------------------------------
// in: [rows, 2*ffn], each row = gate (columns 0..ffn-1) | up (columns ffn..2ffn-1); out: [rows, ffn].
//   out = silu(gate) * up,  silu(x) = x * sigmoid(x).
cudaError_t swiglu_fwd(const bf16* in, bf16* out, int64_t rows, int ffn, cudaStream_t stream);
// dout: [rows, ffn]; din: [rows, 2*ffn] = d_gate | d_up:
//   d_up = dout * silu(gate);  d_gate = dout * up * sigmoid(gate) * (1 + gate * (1 - sigmoid(gate))).
cudaError_t swiglu_bwd(const bf16* dout, const bf16* in, bf16* din, int64_t rows, int ffn, cudaStream_t stream);

// ---- GeLU (tanh approximation) ---------------------------------------------------------------
// x, y: [n].  y = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3).
cudaError_t gelu_fwd(const bf16* x, bf16* y, int64_t n, cudaStream_t stream);
//   dx = dy * (0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2)).
cudaError_t gelu_bwd(const bf16* dy, const bf16* x, bf16* dx, int64_t n, cudaStream_t stream);

// ---- Residual --------------------------------------------------------------------------------
// a, b, y: [n].  y = a + b (the residual add when dropout is off). y may alias a or b.
cudaError_t residual_add(const bf16* a, const bf16* b, bf16* y, int64_t n, cudaStream_t stream);
// x, residual, y: [rows, hidden]; bias: [hidden] or nullptr (no bias). With e = r*hidden + c,
//   y[e] = residual[e] + keep(e) * (x[e] + bias[c]) / (1 - p),
// keep(e) = dropout_keep(seed, e, dropout_threshold(p)) from kernels/philox.cuh (Philox-4x32-10;
// P(drop) = p). p in [0, 1); p = 0 is a plain bias + residual add.
cudaError_t bias_dropout_residual_fwd(const bf16* x, const bf16* bias, const bf16* residual, bf16* y, int64_t rows,
                                      int hidden, float p, uint64_t seed, cudaStream_t stream);
// The dropout backward on the same mask (same seed, same flat index e): dx[e] = dy[e] * keep(e) / (1 - p).
cudaError_t dropout_bwd(const bf16* dy, bf16* dx, int64_t n, float p, uint64_t seed, cudaStream_t stream);

// ---- Rotary position embedding (rotate-half convention) --------------------------------------
// x, y: [tokens, heads, head_dim], tokens = batch * seq, token t at position t % seq. With
// h = head_dim/2, inv_freq_i = theta^(-2i/head_dim), a = pos * inv_freq_i (i < h):
//   y[i]   = x[i] cos a - x[i+h] sin a;   y[i+h] = x[i+h] cos a + x[i] sin a.
// head_dim must be even and at most 512. In place (y == x) is allowed.
cudaError_t rope_fwd(const bf16* x, bf16* y, int64_t tokens, int seq, int heads, int head_dim, float theta,
                     cudaStream_t stream);
// The transpose (rotation by -a): dx[i] = dy[i] cos a + dy[i+h] sin a;  dx[i+h] = dy[i+h] cos a - dy[i] sin a.
cudaError_t rope_bwd(const bf16* dy, bf16* dx, int64_t tokens, int seq, int heads, int head_dim, float theta,
                     cudaStream_t stream);
// q [tokens, q_heads, head_dim] and k [tokens, kv_heads, head_dim] rotated by the same angles in
// one launch (one kernel over q's and k's bytes, as a fused QKV RoPE runs and as the simulator
// prices it): the same results as rope_fwd / rope_bwd on each, one launch and one latency fewer.
cudaError_t rope_qk_fwd(const bf16* q, bf16* yq, const bf16* k, bf16* yk, int64_t tokens, int seq, int q_heads,
                        int kv_heads, int head_dim, float theta, cudaStream_t stream);
cudaError_t rope_qk_bwd(const bf16* dyq, bf16* dq, const bf16* dyk, bf16* dk, int64_t tokens, int seq, int q_heads,
                        int kv_heads, int head_dim, float theta, cudaStream_t stream);

// ---- Softmax cross-entropy, fused forward + backward -----------------------------------------
// logits, dlogits: [rows, vocab]; targets: [rows] int32 in [0, vocab), or < 0 to ignore the row;
// loss: [rows] fp32. Per row, lse = log(sum_j exp(logits_j)):
//   loss = lse - logits[target];  dlogits_j = grad_scale * (exp(logits_j - lse) - [j == target]).
// Ignored rows: loss = 0, dlogits = 0. The probabilities are never written; logits are read once
// from HBM (a row that does not fit the register cache, vocab > 32768, is re-read from L2).
cudaError_t cross_entropy_fwd_bwd(const bf16* logits, const int32_t* targets, float* loss, bf16* dlogits, int64_t rows,
                                  int vocab, float grad_scale, cudaStream_t stream);

// ---- AdamW -----------------------------------------------------------------------------------
struct AdamParams {
  float lr = 1e-4f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
  int step = 1;  // 1-based step number, for the bias corrections
};
// master, m, v: [n] fp32, updated in place; grad: [n] bf16; weight: [n] bf16 = bf16(new master).
// The PyTorch AdamW update, bc1 = 1 - beta1^step, bc2 = 1 - beta2^step:
//   m = beta1 m + (1-beta1) g;  v = beta2 v + (1-beta2) g^2;
//   master = master (1 - lr wd) - (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps).
cudaError_t adamw_step(float* master, float* m, float* v, const bf16* grad, bf16* weight, int64_t n,
                       const AdamParams& params, cudaStream_t stream);

// ---- Causal attention (FlashAttention-2 style, tensor cores) ---------------------------------
struct AttentionShape {
  int batch = 1;
  int seq = 0;      // query and key length (causal self-attention)
  int q_heads = 0;  // a multiple of kv_heads (GQA: q head h reads kv head h / (q_heads / kv_heads))
  int kv_heads = 0;
  int head_dim = 0;  // 64 or 128
};
// q, o: [batch, seq, q_heads, head_dim]; k, v: [batch, seq, kv_heads, head_dim]; lse: [batch,
// q_heads, seq] fp32. For query row i: s_j = scale * q_i . k_j for j <= i,
//   lse_i = log(sum_{j<=i} exp(s_j));  o_i = sum_{j<=i} exp(s_j - lse_i) v_j.
// scale is usually 1/sqrt(head_dim). Rows of q, k, v, o must be 16-byte aligned (head_dim 64/128 is).
// Which kernels run, forward and backward (docs/kernels.md): kMmaSync, the FlashAttention-2 style
// kernels (sm_80+, mma.sync); kWgmma, the Hopper warpgroup-MMA kernels (compute capability 9.0
// only, else cudaErrorNotSupported); kAuto, the faster of the two on this GPU as measured on an
// H100 (docs/kernels.md, version 5), per direction; TRAINSIM_ATTENTION_KERNEL=mma|wgmma in the
// environment overrides kAuto alone.
enum class AttentionKernel { kAuto, kMmaSync, kWgmma };
cudaError_t attention_fwd(const bf16* q, const bf16* k, const bf16* v, bf16* o, float* lse, const AttentionShape& shape,
                          float scale, cudaStream_t stream, AttentionKernel kernel = AttentionKernel::kAuto);
// True where attention_fwd can run AttentionKernel::kWgmma (a compute capability 9.0 GPU).
bool attention_wgmma_supported();
// What kAuto runs on the current GPU for the forward (backward = false) or the backward, after
// TRAINSIM_ATTENTION_KERNEL; and a kernel's name ("mma.sync", "wgmma"; "auto" for kAuto).
AttentionKernel attention_auto_choice(bool backward);
const char* attention_kernel_name(AttentionKernel kernel);
// fp32 scratch the backward needs: dq, dk, dv accumulators and the row sums D = rowsum(dO * O).
size_t attention_bwd_workspace_bytes(const AttentionShape& shape);
// dout, dq: like q; dk, dv: like k (summed over the q heads of each GQA group). With P the
// probabilities of the forward (recomputed from lse), dP = dO V^T, dS = P * (dP - D):
//   dq = scale * dS K;  dk = scale * dS^T Q;  dv = P^T dO.
// workspace: attention_bwd_workspace_bytes(shape) bytes of device memory, 256-byte aligned.
cudaError_t attention_bwd(const bf16* q, const bf16* k, const bf16* v, const bf16* o, const bf16* dout,
                          const float* lse, bf16* dq, bf16* dk, bf16* dv, void* workspace, size_t workspace_bytes,
                          const AttentionShape& shape, float scale, cudaStream_t stream,
                          AttentionKernel kernel = AttentionKernel::kAuto);

}  // namespace trainsim::kernels
