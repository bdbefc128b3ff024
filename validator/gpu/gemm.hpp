#pragma once
// GEMMs through cuBLASLt in the layouts a transformer layer uses (row-major Y[m,n] = X[m,k] W^T
// "TN", dX = dY W "NN", dW = dY^T X "NT"; see models/llm/layer_kernels.hpp), bf16 or fp8 inputs,
// fp32 accumulation, bf16 output. A plan picks cuBLASLt's first heuristic algorithm (what a
// framework gets) and can time the other candidates to find the best one.

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "models/compute/compute_model.hpp"

namespace trainsim::validator::gpu {

class GemmRunner {
 public:
  explicit GemmRunner(size_t workspace_bytes = size_t{32} << 20);
  ~GemmRunner();
  GemmRunner(const GemmRunner&) = delete;
  GemmRunner& operator=(const GemmRunner&) = delete;

  struct Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    std::vector<cublasLtMatmulHeuristicResult_t> algos;  // heuristic order; [0] is the default
    bool fp8 = false;
  };
  // Layout "TN" | "NN" | "NT" as in GemmLayout; fp8 needs "TN" (Hopper cuBLASLt). Asks for up to
  // `candidates` algorithms. Throws when cuBLASLt has none for the shape.
  Plan plan(const models::compute::GemmShape& s, const std::string& layout, bool fp8, int candidates);
  void destroy(Plan& p);
  // Enqueues C = op(A) op(B) with algorithm `algo` of the plan. Pointers follow the row-major
  // operand roles: `x` is the m-side operand, `w` the n-side one (see gemm.cpp).
  void run(const Plan& p, const void* x, const void* w, void* c, int algo, cudaStream_t s);

  // Bytes each operand needs for a shape (elements times element size, batch included).
  static size_t x_bytes(const models::compute::GemmShape& s, bool fp8);
  static size_t w_bytes(const models::compute::GemmShape& s, bool fp8);
  static size_t c_bytes(const models::compute::GemmShape& s);

 private:
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

}  // namespace trainsim::validator::gpu
