#include "models/calibration/kernel_evidence.hpp"

#include <set>

namespace trainsim::models::calibration {

stack::Evidence kernel_evidence(const MeasurementSet& ms, const std::string& gpu, const std::string& cluster) {
  stack::Evidence e;
  if (!gpu.empty()) e.gpu_presets = {gpu};
  std::set<std::string> precisions;
  bool links = false;
  for (const Measurement& m : ms.items) {
    if (m.kind == OpKind::kGemm) {
      precisions.insert(m.precision);
      stack::extend(e.gemm_m, static_cast<double>(m.m));
      stack::extend(e.gemm_n, static_cast<double>(m.n));
      stack::extend(e.gemm_k, static_cast<double>(m.k));
    } else if (m.kind == OpKind::kCollective && m.ranks >= 2) {
      links = true;
      stack::extend(e.message_bytes, static_cast<double>(m.bytes));
    }
  }
  e.precisions.assign(precisions.begin(), precisions.end());
  if (links && !cluster.empty()) e.clusters = {cluster};
  return e;
}

}  // namespace trainsim::models::calibration
