#include "models/workload/dag/workload.hpp"

namespace trainsim::models::workload {

const char* to_string(Category c) {
  switch (c) {
    case Category::kCompute: return "compute";
    case Category::kRecompute: return "recompute";
    case Category::kOptimizer: return "optimizer";
    case Category::kTpComm: return "tp";
    case Category::kDpComm: return "dp";
    case Category::kPpComm: return "pp";
    case Category::kCpComm: return "cp";
    case Category::kEpComm: return "ep";
    case Category::kOffload: return "offload";
    case Category::kHostSync: return "host_sync";
  }
  return "?";
}

}  // namespace trainsim::models::workload
