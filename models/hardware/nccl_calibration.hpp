#pragma once
// How NCCL behaves on one cluster: the GPU generation whose tuning constants NCCL applies, and
// per-protocol scales of NCCL's own latency and bandwidth model fitted to that system's measured
// nccl-tests curves (1.0 = NCCL's model as written). Read by models/collectives/nccl_tuning; the
// `nccl` object of a cluster preset (docs/network.md "Protocols").

#include <string>

#include "sim/config/schema.hpp"

namespace trainsim::models::hardware {

// Multiplies NCCL's modelled latency and bandwidth of one protocol (measured / modelled).
struct ProtocolScale {
  double latency = 1.0;
  double bandwidth = 1.0;
};

struct NcclCalibration {
  std::string architecture = "hopper";  // volta | ampere | hopper | blackwell (NCCL's compute-capability classes)
  std::string cpu = "intel";            // intel | amd | arm: the host CPU NCCL's tuning reads (tuning.cc)
  ProtocolScale ll, ll128, simple;      // ring and tree with the LL, LL128 and Simple protocols
  ProtocolScale nvls;                   // NVLS and NVLS-tree (NVLink SHARP; Simple protocol)
};

const sim::config::Schema<NcclCalibration>& nccl_calibration_schema();
NcclCalibration parse_nccl_calibration(const sim::config::Json& j, const std::string& path);

}  // namespace trainsim::models::hardware
