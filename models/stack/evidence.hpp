#pragma once
// What a set of measurements covered: the stacks, precisions, clusters and GPUs they ran on and
// the range of sizes. A calibration (models/hardware/calibration.hpp) carries the evidence of the
// runs it was fitted to, a stack preset that of the published runs its accuracy suite checks
// (stack_spec.hpp, `accuracy`). A job outside it is extrapolated: a prediction without evidence.
//
// "Outside" for a range means more than 2x beyond it (a job of 1,024 GPUs is inside evidence from
// 64 to 512 GPUs, one of 2,048 is not): within a factor of two the mechanisms that scale with
// size are the ones the runs exercised.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/schema.hpp"

namespace trainsim::models::stack {

using Range = std::optional<std::pair<double, double>>;  // [min, max]; nullopt: not measured

struct Evidence {
  std::vector<std::string> stacks, precisions, clusters, gpu_presets;  // empty: not restricted
  Range gpus, params_b, seq_len;
  std::optional<bool> dense, moe;  // measured dense / MoE models
  // Kernel measurements (a validator or Kineto calibration, models/calibration/fit.hpp): the GEMM
  // dimensions (C[m,n] = A[m,k] B[k,n]) and the collectives' per-rank buffers (nccl-tests' size,
  // bytes) that were timed.
  Range gemm_m, gemm_n, gemm_k, message_bytes;
  bool empty() const;
};

// Widens `r` to hold `v` (a range of one value when empty); v <= 0 (nothing measured) is ignored.
void extend(Range& r, double v);

// Reads an evidence object (keys as the fields; ranges as [min, max]); throws ConfigError at path.
Evidence parse_evidence(const sim::config::Json& j, const std::string& path);
sim::config::Json to_json(const Evidence& e);

// A job as evidence sees it.
struct Coverage {
  std::string stack, precision, cluster, gpu;
  double gpus = 0, params_b = 0, seq_len = 0;
  bool moe = false;
  // The spans of the job's main GEMMs' dimensions and of its collectives' buffers
  // (models/workload/job/kernel_sizes.hpp); nullopt: none (no collectives on one GPU).
  Range gemm_m, gemm_n, gemm_k, message_bytes;
};

// The band statistic of a set of relative errors: the 68th percentile of their absolute values
// (linear between order statistics), the largest below 4 errors; 0 for none. Used alike for a
// calibration's leave-one-out errors and an accuracy suite's rows.
double error_band(std::vector<double> errors);

// What of `c` lies outside `e`, one phrase each ("precision mxfp8 (measured: fp8)"); empty: inside.
// A span of the job is outside a measured range when it reaches more than 2x beyond it; GEMM
// dimensions only below (larger GEMMs run at the saturated efficiency the largest measured show).
std::vector<std::string> outside(const Evidence& e, const Coverage& c);

}  // namespace trainsim::models::stack
