#pragma once
// Every CUDA, cuBLASLt and NCCL call is checked: a failure throws with the call, file and line.

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

namespace trainsim::validator::gpu {

[[noreturn]] inline void fail(const char* what, const std::string& err, const char* file, int line) {
  throw std::runtime_error(std::string(what) + " failed: " + err + " (" + file + ":" + std::to_string(line) + ")");
}

}  // namespace trainsim::validator::gpu

#define TRAINSIM_CUDA(call)                                                                         \
  do {                                                                                              \
    const cudaError_t trainsim_e_ = (call);                                                         \
    if (trainsim_e_ != cudaSuccess)                                                                 \
      ::trainsim::validator::gpu::fail(#call, cudaGetErrorString(trainsim_e_), __FILE__, __LINE__); \
  } while (0)
#define TRAINSIM_CUBLAS(call)                                                                            \
  do {                                                                                                   \
    const cublasStatus_t trainsim_s_ = (call);                                                           \
    if (trainsim_s_ != CUBLAS_STATUS_SUCCESS)                                                            \
      ::trainsim::validator::gpu::fail(#call, cublasLtGetStatusString(trainsim_s_), __FILE__, __LINE__); \
  } while (0)
#define TRAINSIM_NCCL(call)                                                                         \
  do {                                                                                              \
    const ncclResult_t trainsim_r_ = (call);                                                        \
    if (trainsim_r_ != ncclSuccess)                                                                 \
      ::trainsim::validator::gpu::fail(#call, ncclGetErrorString(trainsim_r_), __FILE__, __LINE__); \
  } while (0)
// After a kernel launch: the launch's own error.
#define TRAINSIM_LAUNCHED() TRAINSIM_CUDA(cudaGetLastError())
