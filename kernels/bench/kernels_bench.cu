// trainsim-kernels-bench: speed of every kernel of kernels/kernels.hpp against the limits measured
// on the same GPU. First the two ceilings: HBM bandwidth from a 1 GiB device-to-device
// cudaMemcpyAsync (bytes read + written) and the tensor-core rate from the best cuBLASLt bf16
// GEMM of 8192^3 (fp32 accumulate). Then, per kernel and size (LLaMA-3-70B at TP 8, seq 8192:
// 8192 tokens, hidden 8192, ffn_local 3584, vocab_local 16032; attention batch 1, 8 q heads, 1 kv
// head), the median time of --reps timed runs after warm-up (CUDA events around each run), the
// achieved rate (GB/s over the minimal bytes: each input read once, each output written once; or
// TFLOP/s for attention, causal forward 2*b*h*s^2*d, backward 2.5x) and its fraction of the
// matching ceiling. Inputs are random; small working sets are replicated and rotated so that a
// run does not find its inputs in L2.
//
// Usage: trainsim-kernels-bench [--json FILE] [--reps N] [--quick] [FILTER]
//   FILTER: run the kernels whose name contains it; --quick: sizes / 64 (a smoke test of the
//   harness, not a measurement).
// Exit 0 on success, 1 on a CUDA error, 77 when there is no usable CUDA GPU.

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "kernels/kernels.hpp"

namespace {

namespace tk = trainsim::kernels;
using tk::bf16;

#define CHECK_CUDA(call)                                                                                       \
  do {                                                                                                         \
    const cudaError_t check_cuda_err_ = (call);                                                                \
    if (check_cuda_err_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(check_cuda_err_)); \
      std::exit(1);                                                                                            \
    }                                                                                                          \
  } while (0)

#define CHECK_CUBLAS(call)                                                             \
  do {                                                                                 \
    const cublasStatus_t check_cublas_st_ = (call);                                    \
    if (check_cublas_st_ != CUBLAS_STATUS_SUCCESS) {                                   \
      std::fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, \
                   static_cast<int>(check_cublas_st_));                                \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

// ---- random device data --------------------------------------------------------------------

__device__ __forceinline__ uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ float unit(uint64_t seed, size_t i) {
  return static_cast<float>(mix64(seed + 0x9E3779B97F4A7C15ull * (i + 1)) >> 40) * 0x1.0p-24f;
}

__global__ void fill_bf16_kernel(bf16* p, size_t n, uint64_t seed, float lo, float hi) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    p[i] = __float2bfloat16(lo + (hi - lo) * unit(seed, i));
  }
}

__global__ void fill_f32_kernel(float* p, size_t n, uint64_t seed, float lo, float hi) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    p[i] = lo + (hi - lo) * unit(seed, i);
  }
}

__global__ void fill_index_kernel(int32_t* p, size_t n, uint64_t seed, int bound) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    p[i] = static_cast<int32_t>(unit(seed, i) * static_cast<float>(bound)) % bound;
  }
}

enum class Fill { kNone, kBf16, kF32, kIndex };

// One buffer of a working set: its size and how to fill it (outputs: kNone).
struct Buf {
  size_t bytes;
  Fill fill = Fill::kNone;
  float lo = -1.0f, hi = 1.0f;  // value range; kIndex: [0, hi)
};

void fill(void* p, const Buf& b, uint64_t seed) {
  constexpr int kThreads = 256;
  const unsigned kBlocks = static_cast<unsigned>(std::min<size_t>(2048, (b.bytes / 2 + kThreads - 1) / kThreads));
  switch (b.fill) {
    case Fill::kNone: CHECK_CUDA(cudaMemset(p, 0, b.bytes)); break;
    case Fill::kBf16:
      fill_bf16_kernel<<<kBlocks, kThreads>>>(static_cast<bf16*>(p), b.bytes / 2, seed, b.lo, b.hi);
      break;
    case Fill::kF32:
      fill_f32_kernel<<<kBlocks, kThreads>>>(static_cast<float*>(p), b.bytes / 4, seed, b.lo, b.hi);
      break;
    case Fill::kIndex:
      fill_index_kernel<<<kBlocks, kThreads>>>(static_cast<int32_t*>(p), b.bytes / 4, seed, static_cast<int>(b.hi));
      break;
  }
  CHECK_CUDA(cudaGetLastError());
}

// `count` copies of a working set (the buffers of one kernel call), so that consecutive timed
// runs touch different memory: enough copies to cover 3x the L2 size, at most 64.
class Sets {
 public:
  Sets(const std::vector<Buf>& bufs, size_t l2_bytes, uint64_t seed) {
    size_t set_bytes = 0;
    for (const auto& b : bufs) set_bytes += b.bytes;
    count_ = static_cast<int>(std::min<size_t>(64, std::max<size_t>(1, (3 * l2_bytes + set_bytes - 1) / set_bytes)));
    ptrs_.resize(count_);
    for (int s = 0; s < count_; ++s) {
      for (size_t i = 0; i < bufs.size(); ++i) {
        void* p = nullptr;
        CHECK_CUDA(cudaMalloc(&p, bufs[i].bytes));
        fill(p, bufs[i], seed + 1000 * s + i);
        ptrs_[s].push_back(p);
      }
    }
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  ~Sets() {
    for (auto& set : ptrs_) {
      for (void* p : set) cudaFree(p);
    }
  }
  Sets(const Sets&) = delete;
  Sets& operator=(const Sets&) = delete;

  int count() const { return count_; }
  template <class T>
  T* get(int set, int buf) const {
    return static_cast<T*>(ptrs_[set][buf]);
  }

 private:
  int count_ = 1;
  std::vector<std::vector<void*>> ptrs_;
};

// ---- timing --------------------------------------------------------------------------------

struct Timing {
  double median_s = 0.0;
  double min_s = 0.0;
};

// Times run(i) for i = 0 .. reps-1 after `warmup` untimed runs; one event pair per run.
Timing time_runs(const std::function<void(int)>& run, int reps, int warmup = 3) {
  for (int i = 0; i < warmup; ++i) run(i);
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> ev(2 * reps);
  for (auto& e : ev) CHECK_CUDA(cudaEventCreate(&e));
  for (int i = 0; i < reps; ++i) {
    CHECK_CUDA(cudaEventRecord(ev[2 * i], nullptr));
    run(warmup + i);
    CHECK_CUDA(cudaEventRecord(ev[2 * i + 1], nullptr));
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaGetLastError());
  std::vector<double> t(reps);
  for (int i = 0; i < reps; ++i) {
    float ms = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    t[i] = ms * 1e-3;
  }
  for (auto& e : ev) CHECK_CUDA(cudaEventDestroy(e));
  std::sort(t.begin(), t.end());
  return Timing{reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]), t[0]};
}

// ---- report --------------------------------------------------------------------------------

struct Row {
  std::string kernel, size, kind;  // kind: "memory" | "compute" | "ceiling"
  Timing t;
  double bytes = 0.0, flops = 0.0;
  double rate = 0.0;      // GB/s or TFLOP/s
  double fraction = 0.0;  // of the ceiling (0 for the ceilings themselves)
};

void print_row(const Row& r) {
  const bool mem = r.bytes > 0.0;
  if (r.kind == "ceiling") {
    std::printf("%-22s %-44s %10.1f %9.1f %-7s\n", r.kernel.c_str(), r.size.c_str(), r.t.median_s * 1e6, r.rate,
                mem ? "GB/s" : "TFLOP/s");
  } else {
    std::printf("%-22s %-44s %10.1f %9.1f %-7s %6.1f%%\n", r.kernel.c_str(), r.size.c_str(), r.t.median_s * 1e6, r.rate,
                mem ? "GB/s" : "TFLOP/s", 100.0 * r.fraction);
  }
  std::fflush(stdout);
}

bool write_json(const char* path, const cudaDeviceProp& prop, double hbm, double tensor, const std::vector<Row>& rows) {
  FILE* f = std::fopen(path, "w");
  if (!f) return false;
  std::fprintf(f, "{\n  \"device\": \"%s\",\n  \"sm\": %d%d,\n  \"sms\": %d,\n", prop.name, prop.major, prop.minor,
               prop.multiProcessorCount);
  std::fprintf(f, "  \"ceilings\": {\"hbm_GBps\": %.3f, \"tensor_bf16_TFLOPs\": %.3f},\n  \"rows\": [\n", hbm, tensor);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::fprintf(f,
                 "    {\"kernel\": \"%s\", \"size\": \"%s\", \"kind\": \"%s\", \"median_s\": %.9g, \"min_s\": %.9g, "
                 "\"bytes\": %.0f, \"flops\": %.0f, \"rate\": %.6g, \"unit\": \"%s\", \"fraction\": %.6g}%s\n",
                 r.kernel.c_str(), r.size.c_str(), r.kind.c_str(), r.t.median_s, r.t.min_s, r.bytes, r.flops, r.rate,
                 r.bytes > 0.0 ? "GB/s" : "TFLOP/s", r.fraction, i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  return std::fclose(f) == 0;
}

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof(buf), f, ap);
  va_end(ap);
  return buf;
}

// ---- ceilings ------------------------------------------------------------------------------

Row measure_hbm(int reps, bool quick) {
  const size_t bytes = quick ? size_t{16} << 20 : size_t{1} << 30;
  void *a = nullptr, *b = nullptr;
  CHECK_CUDA(cudaMalloc(&a, bytes));
  CHECK_CUDA(cudaMalloc(&b, bytes));
  fill(a, Buf{bytes, Fill::kF32}, 1);
  Row r;
  r.kernel = "hbm_copy";
  r.size = quick ? "cudaMemcpyAsync D2D 16 MiB (32 MiB moved)" : "cudaMemcpyAsync D2D 1 GiB (2 GiB moved)";
  r.kind = "ceiling";
  r.t = time_runs(
      [&](int i) {
        CHECK_CUDA(cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice, nullptr));
      },
      reps);
  r.bytes = 2.0 * static_cast<double>(bytes);
  r.rate = r.bytes / r.t.median_s * 1e-9;
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  return r;
}

// The best of the algorithms cuBLASLt's heuristic proposes for a bf16 TN GEMM, fp32 accumulate.
Row measure_gemm(int reps, bool quick) {
  const int n = quick ? 1024 : 8192;
  constexpr size_t kWorkspace = size_t{64} << 20;
  const size_t elems = static_cast<size_t>(n) * n;
  void *A = nullptr, *B = nullptr, *C = nullptr, *ws = nullptr;
  CHECK_CUDA(cudaMalloc(&A, elems * 2));
  CHECK_CUDA(cudaMalloc(&B, elems * 2));
  CHECK_CUDA(cudaMalloc(&C, elems * 2));
  CHECK_CUDA(cudaMalloc(&ws, kWorkspace));
  fill(A, Buf{elems * 2, Fill::kBf16}, 2);
  fill(B, Buf{elems * 2, Fill::kBf16}, 3);

  cublasLtHandle_t lt = nullptr;
  CHECK_CUBLAS(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op = nullptr;
  CHECK_CUBLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, n, n, n));
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, n, n, n));
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, n, n));
  cublasLtMatmulPreference_t pref = nullptr;
  CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  const size_t ws_bytes = kWorkspace;
  CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                                    sizeof(ws_bytes)));
  cublasLtMatmulHeuristicResult_t results[8] = {};
  int found = 0;
  CHECK_CUBLAS(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 8, results, &found));
  if (found == 0) {
    std::fprintf(stderr, "cuBLASLt proposes no algorithm for a bf16 GEMM\n");
    std::exit(1);
  }
  const float alpha = 1.0f, beta = 0.0f;
  auto run_algo = [&](int a) {
    CHECK_CUBLAS(
        cublasLtMatmul(lt, op, &alpha, A, la, B, lb, &beta, C, lc, C, lc, &results[a].algo, ws, ws_bytes, nullptr));
  };
  int best = 0;
  double best_t = 1e30;
  for (int a = 0; a < found; ++a) {
    const Timing t = time_runs([&](int) { run_algo(a); }, 5, 2);
    if (t.median_s < best_t) {
      best_t = t.median_s;
      best = a;
    }
  }
  Row r;
  r.kernel = "gemm_bf16";
  r.size = fmt("cuBLASLt %d^3 TN, fp32 acc (best of %d)", n, found);
  r.kind = "ceiling";
  r.t = time_runs([&](int) { run_algo(best); }, reps);
  r.flops = 2.0 * n * static_cast<double>(n) * n;
  r.rate = r.flops / r.t.median_s * 1e-12;

  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(op);
  cublasLtDestroy(lt);
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(B));
  CHECK_CUDA(cudaFree(C));
  CHECK_CUDA(cudaFree(ws));
  return r;
}

// ---- kernel cases --------------------------------------------------------------------------

struct Bench {
  int reps = 20;
  size_t l2 = 50u << 20;
  double hbm = 0.0, tensor = 0.0;  // ceilings: GB/s, TFLOP/s
  const char* filter = nullptr;
  std::vector<Row> rows;

  bool selected(const std::string& name) const { return filter == nullptr || name.find(filter) != std::string::npos; }

  // A memory-bound case: `bufs` are the working set, `bytes` the minimal traffic of one call.
  void memory(const std::string& name, const std::string& size, const std::vector<Buf>& bufs, double bytes,
              const std::function<cudaError_t(const Sets&, int)>& call) {
    if (!selected(name)) return;
    Sets sets(bufs, l2, std::hash<std::string>{}(name + size));
    Row r;
    r.kernel = name;
    r.size = size;
    r.kind = "memory";
    r.t = time_runs([&](int i) { CHECK_CUDA(call(sets, i % sets.count())); }, reps);
    r.bytes = bytes;
    r.rate = bytes / r.t.median_s * 1e-9;
    r.fraction = r.rate / hbm;
    print_row(r);
    rows.push_back(r);
  }

  void compute(const std::string& name, const std::string& size, double flops, Sets& sets,
               const std::function<cudaError_t(const Sets&, int)>& call) {
    Row r;
    r.kernel = name;
    r.size = size;
    r.kind = "compute";
    r.t = time_runs([&](int i) { CHECK_CUDA(call(sets, i % sets.count())); }, reps);
    r.flops = flops;
    r.rate = flops / r.t.median_s * 1e-12;
    r.fraction = r.rate / tensor;
    print_row(r);
    rows.push_back(r);
  }
};

constexpr size_t kB16 = sizeof(bf16);
constexpr size_t kF32 = sizeof(float);

void bench_norms(Bench& b, int64_t T, int H) {
  const size_t n = static_cast<size_t>(T) * H;
  const std::string size = fmt("T=%lld H=%d", static_cast<long long>(T), H);
  const Buf x{n * kB16, Fill::kBf16}, w{H * kB16, Fill::kBf16, 0.5f, 1.5f}, bias{H * kB16, Fill::kBf16};
  const Buf y{n * kB16}, rstd{T * kF32, Fill::kF32, 0.5f, 2.0f}, mean{T * kF32, Fill::kF32, -0.1f, 0.1f};
  const Buf dw{H * kF32};
  // x, w, y, rstd
  b.memory("rmsnorm_fwd", size, {x, w, y, rstd}, 2.0 * n * kB16 + H * kB16 + T * kF32, [=](const Sets& s, int i) {
    return tk::rmsnorm_fwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), s.get<bf16>(i, 2), s.get<float>(i, 3), T, H, 1e-5f,
                           nullptr);
  });
  // dy, x, w, rstd, dx, dw
  b.memory("rmsnorm_bwd", size, {x, x, w, rstd, y, dw}, 3.0 * n * kB16 + H * (kB16 + kF32) + T * kF32,
           [=](const Sets& s, int i) {
             return tk::rmsnorm_bwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), s.get<bf16>(i, 2), s.get<float>(i, 3),
                                    s.get<bf16>(i, 4), s.get<float>(i, 5), T, H, nullptr);
           });
  // x, w, b, y, mean, rstd
  b.memory("layernorm_fwd", size, {x, w, bias, y, mean, rstd}, 2.0 * n * kB16 + 2.0 * H * kB16 + 2.0 * T * kF32,
           [=](const Sets& s, int i) {
             return tk::layernorm_fwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), s.get<bf16>(i, 2), s.get<bf16>(i, 3),
                                      s.get<float>(i, 4), s.get<float>(i, 5), T, H, 1e-5f, nullptr);
           });
  // dy, x, w, mean, rstd, dx, dw, db
  b.memory("layernorm_bwd", size, {x, x, w, mean, rstd, y, dw, dw},
           3.0 * n * kB16 + H * (kB16 + 2.0 * kF32) + 2.0 * T * kF32, [=](const Sets& s, int i) {
             return tk::layernorm_bwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), s.get<bf16>(i, 2), s.get<float>(i, 3),
                                      s.get<float>(i, 4), s.get<bf16>(i, 5), s.get<float>(i, 6), s.get<float>(i, 7), T,
                                      H, nullptr);
           });
}

void bench_elementwise(Bench& b, int64_t T, int H, int F, int gelu_width) {
  const size_t nin = static_cast<size_t>(T) * 2 * F, nout = static_cast<size_t>(T) * F;
  const std::string fsize = fmt("T=%lld ffn=%d", static_cast<long long>(T), F);
  b.memory("swiglu_fwd", fsize, {Buf{nin * kB16, Fill::kBf16, -4, 4}, Buf{nout * kB16}}, (nin + nout) * kB16,
           [=](const Sets& s, int i) { return tk::swiglu_fwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), T, F, nullptr); });
  b.memory("swiglu_bwd", fsize, {Buf{nout * kB16, Fill::kBf16}, Buf{nin * kB16, Fill::kBf16, -4, 4}, Buf{nin * kB16}},
           (nout + 2.0 * nin) * kB16, [=](const Sets& s, int i) {
             return tk::swiglu_bwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), s.get<bf16>(i, 2), T, F, nullptr);
           });

  const int64_t ng = T * gelu_width;
  const std::string gsize =
      fmt("n=%lld (T=%lld x %d)", static_cast<long long>(ng), static_cast<long long>(T), gelu_width);
  b.memory("gelu_fwd", gsize, {Buf{ng * kB16, Fill::kBf16, -4, 4}, Buf{ng * kB16}}, 2.0 * ng * kB16,
           [=](const Sets& s, int i) { return tk::gelu_fwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), ng, nullptr); });
  b.memory("gelu_bwd", gsize, {Buf{ng * kB16, Fill::kBf16}, Buf{ng * kB16, Fill::kBf16, -4, 4}, Buf{ng * kB16}},
           3.0 * ng * kB16, [=](const Sets& s, int i) {
             return tk::gelu_bwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), s.get<bf16>(i, 2), ng, nullptr);
           });

  const int64_t n = T * H;
  const std::string size = fmt("T=%lld H=%d", static_cast<long long>(T), H);
  const Buf act{n * kB16, Fill::kBf16}, out{n * kB16};
  b.memory("residual_add", size, {act, act, out}, 3.0 * n * kB16, [=](const Sets& s, int i) {
    return tk::residual_add(s.get<bf16>(i, 0), s.get<bf16>(i, 1), s.get<bf16>(i, 2), n, nullptr);
  });
  b.memory("bias_dropout_residual", size + " p=0.1", {act, Buf{H * kB16, Fill::kBf16}, act, out},
           3.0 * n * kB16 + H * kB16, [=](const Sets& s, int i) {
             return tk::bias_dropout_residual_fwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), s.get<bf16>(i, 2),
                                                  s.get<bf16>(i, 3), T, H, 0.1f, 1234u + i, nullptr);
           });
  b.memory("dropout_bwd", size + " p=0.1", {act, out}, 2.0 * n * kB16, [=](const Sets& s, int i) {
    return tk::dropout_bwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), n, 0.1f, 1234u + i, nullptr);
  });
}

void bench_rope(Bench& b, int64_t T, int seq, int heads, int d, const char* what) {
  const size_t n = static_cast<size_t>(T) * heads * d;
  const std::string size = fmt("%s T=%lld heads=%d d=%d", what, static_cast<long long>(T), heads, d);
  b.memory("rope_fwd", size, {Buf{n * kB16, Fill::kBf16}, Buf{n * kB16}}, 2.0 * n * kB16, [=](const Sets& s, int i) {
    return tk::rope_fwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), T, seq, heads, d, 500000.0f, nullptr);
  });
  b.memory("rope_bwd", size, {Buf{n * kB16, Fill::kBf16}, Buf{n * kB16}}, 2.0 * n * kB16, [=](const Sets& s, int i) {
    return tk::rope_bwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), T, seq, heads, d, 500000.0f, nullptr);
  });
}

void bench_rope_qk(Bench& b, int64_t T, int seq, int hq, int hk, int d) {
  const size_t nq = static_cast<size_t>(T) * hq * d, nk = static_cast<size_t>(T) * hk * d;
  const std::string size = fmt("q+k T=%lld heads=%d+%d d=%d", static_cast<long long>(T), hq, hk, d);
  const std::vector<Buf> bufs{Buf{nq * kB16, Fill::kBf16}, Buf{nq * kB16}, Buf{nk * kB16, Fill::kBf16}, Buf{nk * kB16}};
  b.memory("rope_qk_fwd", size, bufs, 2.0 * (nq + nk) * kB16, [=](const Sets& s, int i) {
    return tk::rope_qk_fwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), s.get<bf16>(i, 2), s.get<bf16>(i, 3), T, seq, hq, hk,
                           d, 500000.0f, nullptr);
  });
  b.memory("rope_qk_bwd", size, bufs, 2.0 * (nq + nk) * kB16, [=](const Sets& s, int i) {
    return tk::rope_qk_bwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), s.get<bf16>(i, 2), s.get<bf16>(i, 3), T, seq, hq, hk,
                           d, 500000.0f, nullptr);
  });
}

void bench_cross_entropy(Bench& b, int64_t T, int V) {
  const size_t n = static_cast<size_t>(T) * V;
  b.memory("cross_entropy", fmt("T=%lld vocab=%d", static_cast<long long>(T), V),
           {Buf{n * kB16, Fill::kBf16, -4, 4}, Buf{T * sizeof(int32_t), Fill::kIndex, 0, static_cast<float>(V)},
            Buf{T * kF32}, Buf{n * kB16}},
           2.0 * n * kB16 + T * (4.0 + kF32), [=](const Sets& s, int i) {
             return tk::cross_entropy_fwd_bwd(s.get<bf16>(i, 0), s.get<int32_t>(i, 1), s.get<float>(i, 2),
                                              s.get<bf16>(i, 3), T, V, 1.0f / static_cast<float>(T), nullptr);
           });
}

void bench_adamw(Bench& b, int64_t n) {
  tk::AdamParams prm;
  prm.step = 10;
  b.memory("adamw", fmt("n=%lld", static_cast<long long>(n)),
           {Buf{n * kF32, Fill::kF32}, Buf{n * kF32, Fill::kF32, -0.01f, 0.01f}, Buf{n * kF32, Fill::kF32, 0, 1e-4f},
            Buf{n * kB16, Fill::kBf16, -0.1f, 0.1f}, Buf{n * kB16}},
           n * (6.0 * kF32 + 2.0 * kB16), [=](const Sets& s, int i) {
             return tk::adamw_step(s.get<float>(i, 0), s.get<float>(i, 1), s.get<float>(i, 2), s.get<bf16>(i, 3),
                                   s.get<bf16>(i, 4), n, prm, nullptr);
           });
}

void bench_attention(Bench& b, int batch, int seq, int hq, int hkv, int d) {
  const bool fwd = b.selected("attention_fwd"), bwd = b.selected("attention_bwd");
  const bool wg = tk::attention_wgmma_supported();
  const bool fwd_wg = wg && b.selected("attention_fwd_wgmma"), bwd_wg = wg && b.selected("attention_bwd_wgmma");
  if (!fwd && !bwd && !fwd_wg && !bwd_wg) return;
  tk::AttentionShape sh;
  sh.batch = batch;
  sh.seq = seq;
  sh.q_heads = hq;
  sh.kv_heads = hkv;
  sh.head_dim = d;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const size_t nq = static_cast<size_t>(batch) * seq * hq * d, nkv = static_cast<size_t>(batch) * seq * hkv * d;
  const size_t nl = static_cast<size_t>(batch) * hq * seq;
  // q, k, v, o, lse, dout, dq, dk, dv
  Sets sets(
      {Buf{nq * kB16, Fill::kBf16, -2, 2}, Buf{nkv * kB16, Fill::kBf16, -2, 2}, Buf{nkv * kB16, Fill::kBf16},
       Buf{nq * kB16}, Buf{nl * kF32}, Buf{nq * kB16, Fill::kBf16}, Buf{nq * kB16}, Buf{nkv * kB16}, Buf{nkv * kB16}},
      b.l2, 77);
  const double flops = 2.0 * batch * hq * static_cast<double>(seq) * seq * d;  // causal: 4 b h s^2 d / 2
  const std::string size = fmt("b=%d s=%d hq=%d hkv=%d d=%d", batch, seq, hq, hkv, d);
  auto run_fwd = [=](const Sets& s, int i) {
    return tk::attention_fwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), s.get<bf16>(i, 2), s.get<bf16>(i, 3),
                             s.get<float>(i, 4), sh, scale, nullptr, tk::AttentionKernel::kMmaSync);
  };
  // The backward needs o and lse of a real forward.
  for (int i = 0; i < sets.count(); ++i) CHECK_CUDA(run_fwd(sets, i));
  if (fwd) b.compute("attention_fwd", size, flops, sets, run_fwd);
  if (fwd_wg) {
    b.compute("attention_fwd_wgmma", size, flops, sets, [=](const Sets& s, int i) {
      return tk::attention_fwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), s.get<bf16>(i, 2), s.get<bf16>(i, 3),
                               s.get<float>(i, 4), sh, scale, nullptr, tk::AttentionKernel::kWgmma);
    });
  }
  if (bwd || bwd_wg) {
    const size_t ws_bytes = tk::attention_bwd_workspace_bytes(sh);
    void* ws = nullptr;
    CHECK_CUDA(cudaMalloc(&ws, ws_bytes));
    auto run_bwd = [=](tk::AttentionKernel kernel) {
      return [=](const Sets& s, int i) {
        return tk::attention_bwd(s.get<bf16>(i, 0), s.get<bf16>(i, 1), s.get<bf16>(i, 2), s.get<bf16>(i, 3),
                                 s.get<bf16>(i, 5), s.get<float>(i, 4), s.get<bf16>(i, 6), s.get<bf16>(i, 7),
                                 s.get<bf16>(i, 8), ws, ws_bytes, sh, scale, nullptr, kernel);
      };
    };
    if (bwd) b.compute("attention_bwd", size, 2.5 * flops, sets, run_bwd(tk::AttentionKernel::kMmaSync));
    if (bwd_wg) b.compute("attention_bwd_wgmma", size, 2.5 * flops, sets, run_bwd(tk::AttentionKernel::kWgmma));
    CHECK_CUDA(cudaFree(ws));
  }
}

}  // namespace

int main(int argc, char** argv) {
  Bench b;
  const char* json = nullptr;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json = argv[++i];
    } else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      b.reps = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "usage: %s [--json FILE] [--reps N] [--quick] [FILTER]\n", argv[0]);
      return 2;
    } else {
      b.filter = argv[i];
    }
  }

  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::printf("kernels-bench: skipped: no CUDA GPU (%s)\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount returned 0 devices");
    return 77;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  if (prop.major < 9) {
    std::printf("kernels-bench: skipped: no CUDA GPU (device 0 is %s, sm_%d%d; the kernels are built for sm_90)\n",
                prop.name, prop.major, prop.minor);
    return 77;
  }
  CHECK_CUDA(cudaSetDevice(0));
  if (prop.l2CacheSize > 0) b.l2 = static_cast<size_t>(prop.l2CacheSize);
  std::printf("kernels-bench on %s (sm_%d%d, %d SMs, L2 %zu MB), median of %d runs\n", prop.name, prop.major,
              prop.minor, prop.multiProcessorCount, b.l2 >> 20, b.reps);
  std::printf("%-22s %-44s %10s %9s %-7s %7s\n", "kernel", "size", "median_us", "rate", "unit", "of_limit");

  const Row hbm = measure_hbm(b.reps, quick);
  print_row(hbm);
  const Row gemm = measure_gemm(b.reps, quick);
  print_row(gemm);
  b.hbm = hbm.rate;
  b.tensor = gemm.rate;
  b.rows = {hbm, gemm};

  // LLaMA-3-70B at TP 8, seq 8192 (one sequence): 8192 tokens, hidden 8192, ffn 28672 / 8 = 3584,
  // vocab 128256 / 8 = 16032, 64 / 8 = 8 q heads and 8 / 8 = 1 kv head of 128. --quick: T and seq
  // / 64, the AdamW shard / 64.
  const int q = quick ? 64 : 1;
  const int64_t T = 8192 / q;
  bench_norms(b, T, 8192);
  bench_norms(b, T, 4096);
  bench_norms(b, 1024 / q, 8192);  // the validator's sequence-parallel shard (1,024 rows)
  bench_elementwise(b, T, 8192, 3584, 4 * 8192 / 8);
  bench_rope(b, T, 8192 / q, 8, 128, "q");
  bench_rope(b, T, 8192 / q, 1, 128, "k");
  bench_rope_qk(b, T, 8192 / q, 8, 1, 128);
  bench_cross_entropy(b, T, 16032);
  // One decoder layer's shard: (8192 * (8192 + 2 * 1024) + 8192 * 8192 + 3 * 8192 * 28672) / 8.
  bench_adamw(b, 106954752 / q);
  bench_attention(b, 1, 8192 / q, 8, 1, 128);
  bench_attention(b, 1, 4096 / q, 8, 1, 128);
  bench_attention(b, 1, 8192 / q, 8, 1, 64);
  bench_attention(b, 1, 4096 / q, 8, 1, 64);

  if (json != nullptr && !write_json(json, prop, b.hbm, b.tensor, b.rows)) {
    std::fprintf(stderr, "kernels-bench: cannot write %s\n", json);
    return 1;
  }
  return 0;
}
