#pragma once
// A calibration: GPU and link constants fitted to measurements taken on one kind of GPU
// (`trainsim validate` and `trainsim kineto` write them from kernel measurements, `trainsim
// calibrate` from logged training runs), applied over the GPU and cluster a job resolves, and the
// constants of the software stacks the runs used. Presets are data
// (models/presets/calibrations/*.json); a job names one with `calibration`.
//
// What belongs to the hardware (GPU and link efficiencies) is kept apart from what belongs to a
// stack (its kernels' scales, its per-step overhead, its allocator's reserve): the stack part
// applies only to jobs on that stack, the hardware part to every job on the GPU.
//
// Overrides are checked by the GPU and cluster schemas themselves (ranges and units), one key at
// a time, so an error names the calibration's own path: `calibration.gpu_overrides.hbm_efficiency`.

#include <map>
#include <string>
#include <vector>

#include "models/hardware/cluster_spec.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "models/stack/evidence.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::models::hardware {

struct Calibration {
  int64_t schema_version = 1;
  std::string name;
  std::string description;
  std::string gpu;                      // GPU preset name the measurements were taken on
  sim::config::Json gpu_overrides;      // object: GpuSpec field -> value (as in a GPU file)
  sim::config::Json cluster_overrides;  // object: ClusterSpec link field -> value (as in a cluster file)
  // object: stack name -> object of calibratable stack field (calibratable_stack_fields) -> value
  sim::config::Json stack_overrides = sim::config::Json::object();
  // Cross-validated relative error of predictions under this calibration (0: not measured): the
  // band `simulate` and `plan` print. `error_runs` runs gave it, by `error_method`.
  double error_band = 0.0;
  int64_t error_runs = 0;
  std::string error_method;
  // What the measurements covered: a job outside is extrapolated (models/stack/evidence.hpp).
  stack::Evidence evidence;
  sim::config::Json provenance;                // free-form object: GPU, driver and library versions, date, command
  sim::config::Json fit;                       // free-form object: residuals, per-parameter notes
  std::map<std::string, std::string> sources;  // overridden field -> origin
};

const sim::config::Schema<Calibration>& calibration_schema();
// Parses and validates a calibration: closed keys, and every override valid for its schema.
Calibration parse_calibration(const sim::config::Json& j, const std::string& path);

// GpuSpec fields a calibration may override: every GPU field but name, description and sources.
const std::vector<std::string>& calibratable_gpu_fields();
// ClusterSpec fields a calibration may override: the link constants (efficiencies, latencies,
// collective launch); bandwidths and shapes are datasheet figures, not fitted.
const std::vector<std::string>& calibratable_cluster_fields();

// Stack fields a calibration may override, dotted as in a stack file ("kernels.gemm_scale"): the
// kernels' throughput scales, the per-step overhead and the allocator's fragmentation reserve.
const std::vector<std::string>& calibratable_stack_fields();

// `gpu` (a GPU JSON object) / `cluster` (a cluster JSON object) with the calibration's overrides
// set over it, and each overridden field's source replaced by the calibration's.
sim::config::Json calibrate_gpu_json(const sim::config::Json& gpu, const Calibration& c);
sim::config::Json calibrate_cluster_json(const sim::config::Json& cluster, const Calibration& c);

}  // namespace trainsim::models::hardware
