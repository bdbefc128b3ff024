#include "validator/gpu/gemm.hpp"

#include "validator/gpu/check.hpp"

namespace trainsim::validator::gpu {

// Row-major C[m,n] = A[m,k] B[k,n] is column-major C^T[n,m] = B^T A^T, so cuBLASLt's first
// operand is the n-side matrix `w` and its second the m-side matrix `x`; the output is n x m with
// leading dimension n. With the layout's letters as cuBLAS transposes of those two operands:
//   first operand `w`:  T -> stored as k x n (ld k), N -> stored as n x k (ld n)
//   second operand `x`: T -> stored as m x k (ld m), N -> stored as k x m (ld k)
// which is Megatron's forward (TN: W is [n,k] = [out,in], X is [m,k]), input gradient (NN: W is
// [k,n] as seen from dY [m,k]) and weight gradient (NT: dY [k,n] and X [k,m] with k = tokens).

GemmRunner::GemmRunner(size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {
  TRAINSIM_CUBLAS(cublasLtCreate(&handle_));
  TRAINSIM_CUDA(cudaMalloc(&workspace_, workspace_bytes_));
}

GemmRunner::~GemmRunner() {
  if (workspace_) cudaFree(workspace_);
  if (handle_) cublasLtDestroy(handle_);
}

size_t GemmRunner::x_bytes(const models::compute::GemmShape& s, bool fp8) {
  return static_cast<size_t>(s.m * s.k * s.batch) * (fp8 ? 1 : 2);
}
size_t GemmRunner::w_bytes(const models::compute::GemmShape& s, bool fp8) {
  return static_cast<size_t>(s.k * s.n * s.batch) * (fp8 ? 1 : 2);
}
size_t GemmRunner::c_bytes(const models::compute::GemmShape& s) { return static_cast<size_t>(s.m * s.n * s.batch) * 2; }

GemmRunner::Plan GemmRunner::plan(const models::compute::GemmShape& s, const std::string& layout, bool fp8,
                                  int candidates) {
  if (layout.size() != 2) throw std::runtime_error("GEMM layout must be TN, NN or NT, got " + layout);
  const bool ta = layout[0] == 'T', tb = layout[1] == 'T';
  if (fp8 && !(ta && !tb)) throw std::runtime_error("FP8 GEMMs on Hopper need the TN layout, got " + layout);
  Plan p;
  p.fp8 = fp8;
  const cudaDataType_t in = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
  TRAINSIM_CUBLAS(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  TRAINSIM_CUBLAS(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
  TRAINSIM_CUBLAS(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
  const uint64_t m = static_cast<uint64_t>(s.m), n = static_cast<uint64_t>(s.n), k = static_cast<uint64_t>(s.k);
  // First operand (w), second (x), output n x m.
  TRAINSIM_CUBLAS(cublasLtMatrixLayoutCreate(&p.a, in, ta ? k : n, ta ? n : k, static_cast<int64_t>(ta ? k : n)));
  TRAINSIM_CUBLAS(cublasLtMatrixLayoutCreate(&p.b, in, tb ? m : k, tb ? k : m, static_cast<int64_t>(tb ? m : k)));
  TRAINSIM_CUBLAS(cublasLtMatrixLayoutCreate(&p.c, CUDA_R_16BF, n, m, static_cast<int64_t>(n)));
  if (s.batch > 1) {
    const int32_t count = static_cast<int32_t>(s.batch);
    const int64_t sa = static_cast<int64_t>(n * k), sb = static_cast<int64_t>(m * k), sc = static_cast<int64_t>(m * n);
    for (auto [layout_ptr, stride] : {std::pair{p.a, sa}, std::pair{p.b, sb}, std::pair{p.c, sc}}) {
      TRAINSIM_CUBLAS(
          cublasLtMatrixLayoutSetAttribute(layout_ptr, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
      TRAINSIM_CUBLAS(cublasLtMatrixLayoutSetAttribute(layout_ptr, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                       sizeof stride));
    }
  }
  cublasLtMatmulPreference_t pref = nullptr;
  TRAINSIM_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  TRAINSIM_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                       &workspace_bytes_, sizeof workspace_bytes_));
  p.algos.resize(static_cast<size_t>(candidates < 1 ? 1 : candidates));
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(handle_, p.op, p.a, p.b, p.c, p.c, pref,
                                                           static_cast<int>(p.algos.size()), p.algos.data(), &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found == 0) {
    destroy(p);
    throw std::runtime_error("cuBLASLt has no algorithm for " + layout + (fp8 ? " fp8" : " bf16") + " GEMM m=" +
                             std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
                             " batch=" + std::to_string(s.batch) + ": " + cublasLtGetStatusString(st));
  }
  p.algos.resize(static_cast<size_t>(found));
  return p;
}

void GemmRunner::destroy(Plan& p) {
  if (p.c) cublasLtMatrixLayoutDestroy(p.c);
  if (p.b) cublasLtMatrixLayoutDestroy(p.b);
  if (p.a) cublasLtMatrixLayoutDestroy(p.a);
  if (p.op) cublasLtMatmulDescDestroy(p.op);
  p = Plan{};
}

void GemmRunner::run(const Plan& p, const void* x, const void* w, void* c, int algo, cudaStream_t s) {
  const float alpha = 1.0f, beta = 0.0f;
  const auto& h = p.algos.at(static_cast<size_t>(algo));
  TRAINSIM_CUBLAS(cublasLtMatmul(handle_, p.op, &alpha, w, p.a, x, p.b, &beta, c, p.c, c, p.c, &h.algo, workspace_,
                                 workspace_bytes_, s));
}

}  // namespace trainsim::validator::gpu
