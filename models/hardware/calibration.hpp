#pragma once
// A calibration: GPU and link constants fitted to measurements taken on one kind of GPU
// (`trainsim validate` writes them), applied over the GPU and cluster a job resolves. Presets are
// data (models/presets/calibrations/*.json); a job names one with `calibration`.
//
// Overrides are checked by the GPU and cluster schemas themselves (ranges and units), one key at
// a time, so an error names the calibration's own path: `calibration.gpu_overrides.hbm_efficiency`.

#include <map>
#include <string>
#include <vector>

#include "models/hardware/cluster_spec.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::models::hardware {

struct Calibration {
  int64_t schema_version = 1;
  std::string name;
  std::string description;
  std::string gpu;                             // GPU preset name the measurements were taken on
  sim::config::Json gpu_overrides;             // object: GpuSpec field -> value (as in a GPU file)
  sim::config::Json cluster_overrides;         // object: ClusterSpec link field -> value (as in a cluster file)
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

// `gpu` (a GPU JSON object) / `cluster` (a cluster JSON object) with the calibration's overrides
// set over it, and each overridden field's source replaced by the calibration's.
sim::config::Json calibrate_gpu_json(const sim::config::Json& gpu, const Calibration& c);
sim::config::Json calibrate_cluster_json(const sim::config::Json& cluster, const Calibration& c);

}  // namespace trainsim::models::hardware
