#pragma once
// What the validator measured on real hardware: one record per benchmarked operation (a GEMM
// shape, a memory-bound kernel, attention, a copy, a collective, a whole replayed layer), plus
// where and how it was measured. Produced by the GPU runner (validator/gpu/), consumed by the fit
// (models/calibration/fit.hpp) and the report (validator/report.hpp); saved as JSON so that a fit can be
// redone on any machine without a GPU.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim::models::calibration {

// Kinds of measured operation. The fit uses each kind for different parameters.
enum class OpKind : uint8_t {
  kGemm,          // m, n, k, batch, precision; flops = 2mnk*batch
  kMemory,        // a memory-bound kernel (norm, activation, residual, rope, optimizer): bytes, kernels
  kAttentionFwd,  // fused causal attention forward: flops (causal-halved, as layer_ops counts them)
  kAttentionBwd,  // its backward: flops = 2.5x forward
  kCopyD2D,       // device-to-device copy: bytes = read + written
  kCopyH2D,       // host (pinned) to device: bytes moved
  kCopyD2H,       // device to host (pinned): bytes moved
  kLaunch,        // an empty kernel launched back to back: per-launch time
  kCollective,    // NCCL collective: op, bytes (per-rank buffer, nccl-tests "size"), ranks, link_class
  kLayer,         // a replayed decoder-layer shard (forward + backward), the sum of its kernels' work
  kIteration,     // a replayed training iteration of one GPU (every micro-batch and the optimizer step)
};
const char* to_string(OpKind k);
OpKind parse_op_kind(const std::string& text, const std::string& path);

struct Measurement {
  std::string name;  // e.g. "attn.qkv.fwd", "mlp.swiglu.bwd", "all_reduce", "layer"
  OpKind kind = OpKind::kGemm;
  // GEMM shape (C[m,n] = A[m,k] B[k,n], `batch` instances) and precision ("bf16" | "fp8").
  int64_t m = 0, n = 0, k = 0, batch = 1;
  std::string precision = "bf16";
  double flops = 0.0;  // floating-point operations of the op (GEMM, attention, layer)
  int64_t bytes = 0;   // bytes moved through HBM (memory kinds, copies) or per-rank buffer (collectives)
  int kernels = 1;     // kernel launches the op is made of
  // Collectives only.
  std::string op;          // all_reduce | all_gather | reduce_scatter | all_to_all | send_recv
  int ranks = 1;           // communicator size
  std::string link_class;  // "nvlink" | "ib" | "local" (one GPU)
  std::string protocol;    // NCCL protocol the run pinned (NCCL_PROTO): "ll" | "ll128" | "simple"; "" = NCCL's choice
  // Results (seconds). measured_s is the median over `reps` timed repetitions after warm-up.
  double measured_s = 0.0;
  double best_s = 0.0;  // GEMM: best median over every cuBLASLt algorithm tried (0: not searched)
  int reps = 0;
};

// Where and how the measurements were taken.
struct Provenance {
  std::string gpu_name;        // cudaDeviceProp::name, e.g. "NVIDIA H100 80GB HBM3"
  std::string gpu_preset;      // trainsim preset the GPU maps to, e.g. "h100-sxm-80gb"
  std::string driver_version;  // e.g. "580.159.04"
  std::string cuda_version;    // runtime version, e.g. "13.0"
  std::string cublas_version;
  std::string nccl_version;
  std::string date;     // ISO 8601 UTC, when the run started
  std::string command;  // the command line that produced the measurements
  std::string host;
  int gpus = 1;         // GPUs (processes) that took part
  std::string replay;   // what the layer replay covered, in words ("" when none ran)
  std::string kernels;  // which kernels/ implementations the replay ran, e.g. the attention kernel ("" unknown)
  nlohmann::json job;   // the measured job's resolved configuration (Job::to_json), or null
};

struct MeasurementSet {
  int schema_version = 1;
  Provenance provenance;
  std::vector<Measurement> items;
};

// Median of repeated timings (0 when empty): what every measurement reports.
double median(std::vector<double> v);
// Median of the absolute values (0 when empty): the error statistic of every fit report.
double median_abs(std::vector<double> v);

nlohmann::json to_json(const Provenance& p);
nlohmann::json to_json(const MeasurementSet& s);
// Throws ConfigError naming the JSON path of anything missing or malformed.
MeasurementSet measurements_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace trainsim::models::calibration
