#include "models/hardware/nccl_calibration.hpp"

namespace trainsim::models::hardware {

using sim::config::Json;

namespace {
const sim::config::Schema<ProtocolScale>& scale_schema() {
  static const sim::config::Schema<ProtocolScale> schema = [] {
    sim::config::Schema<ProtocolScale> s("nccl protocol scale",
                                         "Measured / modelled latency and bandwidth of one NCCL protocol.");
    s.number("latency", &ProtocolScale::latency, 0.05, 20.0, 1.0,
             "Scale of NCCL's modelled latency (base + per-step hardware latency).")
        .number("bandwidth", &ProtocolScale::bandwidth, 0.01, 4.0, 1.0, "Scale of NCCL's modelled bus bandwidth.");
    return s;
  }();
  return schema;
}

void read_scale(ProtocolScale& out, const Json& j, const std::string& path) { scale_schema().parse(j, path, out); }
}  // namespace

const sim::config::Schema<NcclCalibration>& nccl_calibration_schema() {
  static const sim::config::Schema<NcclCalibration> schema = [] {
    sim::config::Schema<NcclCalibration> s(
        "nccl",
        "NCCL's tuning model on this cluster: the GPU generation and per-protocol scales fitted to measurements.");
    s.enumeration("architecture", &NcclCalibration::architecture, {"volta", "ampere", "hopper", "blackwell"},
                  std::string("hopper"),
                  "GPU generation whose NCCL tuning constants apply (NVIDIA/nccl v2.30.7 src/graph/tuning.cc).");
    s.enumeration("cpu", &NcclCalibration::cpu, {"intel", "amd", "arm"}, std::string("intel"),
                  "Host CPU as NCCL's tuning sees it (tuning.cc): the network post overhead of a ring step (1 us "
                  "on Intel and Arm, 2 on AMD), LL's multi-node bandwidth cap (AMD row), and the size correction "
                  "of Blackwell NVLS-tree (x86 hosts only). DGX: intel; Grace (GB200, GB300): arm.");
    const auto scale = [&](const char* key, ProtocolScale NcclCalibration::*m, const char* doc) {
      s.custom(key, "{\"latency\": number, \"bandwidth\": number}", std::string("{}"), doc,
               [m](NcclCalibration& c, const Json& j, const std::string& p) { read_scale(c.*m, j, p); });
    };
    scale("ll", &NcclCalibration::ll, "LL protocol (8-byte lines, half payload): latency and bandwidth scales.");
    scale("ll128", &NcclCalibration::ll128, "LL128 protocol (128-byte lines, 120 bytes payload).");
    scale("simple", &NcclCalibration::simple, "Simple protocol (bulk copies with flag synchronisation).");
    scale("nvls", &NcclCalibration::nvls, "NVLS and NVLS-tree (NVLink SHARP reductions in the NVSwitch).");
    return s;
  }();
  return schema;
}

NcclCalibration parse_nccl_calibration(const Json& j, const std::string& path) {
  NcclCalibration c;
  nccl_calibration_schema().parse(j, path, c);
  return c;
}

}  // namespace trainsim::models::hardware
