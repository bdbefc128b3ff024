#pragma once
// Fits the simulator's GPU and link constants to measurements (models/calibration/measurement.hpp) by
// weighted least squares: each record's residual is divided by its measured time, so the fit
// minimises relative error and a 10 us kernel counts as much as a 10 ms one. Each constant is
// fitted from the records that inform it, under the same formulas the simulator replays with
// (models::compute::ComputeModel, models::collectives::AlphaBetaModel's ring), in this order:
//
//   kernel_launch         median per-launch time of `launch` records; without any, the intercept
//                         of the memory fit below
//   hbm_efficiency        `memory` and `copy_d2d` records: t = kernels*launch + bytes/(hbm*eff)
//   gemm_efficiency,      `gemm` records (bf16/fp16 and fp8 separately), t = max(flops/(peak*clock*
//   fp8_gemm_efficiency,  E*shape(K0)), traffic/hbm) + launch, shape efficiency from ComputeModel.
//   gemm_tile_overhead_k  1/E by LS on the records whose math term dominates, for every K0 of a
//                         grid (0, 16, ..., 512, then refined to 1 around the best); the K0 with
//                         the least relative RMS error over all GEMM records is kept
//   gemm_wave_quantization  jointly with the tile overhead: a grid 0, 0.1, ..., 1 of the share of a
//                         partial last wave that is lost (when at least 2 bf16 GEMMs leave a wave
//                         partly idle under the shape model)
//   attention_efficiency, `attention_fwd` and `attention_bwd` records apart: t = flops/(peak_bf16*
//   attention_bwd_eff.    clock*E) + launch (a direction with no records keeps its prior)
//   collective_launch,    `collective` records over NVLink (one node): t = collective_launch +
//   nvlink_efficiency     nvlink_latency*steps + busbytes/(nvlink_bandwidth*eff); the per-hop
//                         latency stays the preset's and the fixed cost goes to collective_launch
//   nic_latency,          `collective` records over InfiniBand: t = collective_launch +
//   nic_efficiency        nvlink_latency*(intra-node steps) + nic_latency*(cross-node steps) +
//                         busbytes/(nic_bandwidth*nic_share*ranks_per_node*eff); with
//                         collective_launch known (from NVLink or the preset) the remaining fixed
//                         cost is per cross-node hop, so it goes to nic_latency
//
// where steps is the ring's step count (2(n-1) for all-reduce, n-1 otherwise) and busbytes the
// per-rank buffer times nccl-tests' bus factor. A constant with no records keeps its prior value
// ("kept: no measurements"); a fitted value outside its schema range is clamped and says so.
// Copies to and from the host and whole-layer records are not fitted (the report compares them).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/calibration/measurement.hpp"
#include "models/hardware/cluster_spec.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "models/stack/evidence.hpp"

namespace trainsim::models::calibration {

// One fitted constant. Times are in seconds, efficiencies are fractions, the tile overhead is in
// elements of K.
struct ParameterFit {
  std::string name;    // the GpuSpec / ClusterSpec field, e.g. "gemm_efficiency", "nvlink_latency"
  std::string target;  // "gpu" or "cluster"
  double prior = 0.0;
  double fitted = 0.0;      // == prior when kept
  bool kept = true;         // no usable records: the prior value stays
  int records = 0;          // records that informed it
  std::string kinds;        // measurement kinds used, e.g. "memory+copy_d2d"
  double rms_before = 0.0;  // relative RMS error of its group's records under the prior constants
  double rms_after = 0.0;   // ... under the fitted constants
  std::string note;         // "kept: no measurements", "clamped to 1", the fwd/bwd split, ...
};

struct FitResult {
  models::hardware::GpuSpec gpu;          // the prior with every fitted constant replaced
  models::hardware::ClusterSpec cluster;  // likewise (the prior cluster, or default when none given)
  bool has_cluster = false;
  std::vector<ParameterFit> parameters;  // in the order above
  // GEMM records timed with an algorithm search (best_s > 0): median of (measured - best) / measured,
  // how much the heuristic's first algorithm (what frameworks run) leaves on the table.
  int gemm_searched = 0;
  double gemm_best_gap = 0.0;
  std::vector<std::string> notes;  // one line each: records not used, groups skipped, caveats
  // What the measurements covered (models/calibration/kernel_evidence.hpp): the calibration's evidence.
  models::stack::Evidence evidence;

  const ParameterFit* find(const std::string& name) const;
  nlohmann::json to_json() const;
};

FitResult fit(const MeasurementSet& measurements, const models::hardware::GpuSpec& prior,
              const models::hardware::ClusterSpec* prior_cluster);

// A calibration file (models/hardware/calibration.hpp) holding the fitted constants: overrides
// only for the parameters actually fitted, each with a source naming the records, the GPU, the date
// and the relative RMS error; the measurement provenance and the fit summary.
nlohmann::json calibration_json(const FitResult& result, const Provenance& provenance, const std::string& name);

}  // namespace trainsim::models::calibration
