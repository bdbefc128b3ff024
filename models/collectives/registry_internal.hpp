#pragma once
// Small helpers shared by the files of the collective registry (models/collectives/*.cpp in
// trainsim_models_registry); not for algorithms or callers.

#include <cstdint>

#include "models/collectives/comm_model.hpp"

namespace trainsim::models::collectives::internal {

// Local copies of comm_model.hpp's to_string and bus_bandwidth_factor: those are defined in
// alpha_beta.cpp (trainsim_models), which links before this registry library, so calling them
// from here leaves undefined references in binaries that do not use them otherwise.
inline const char* op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "all_reduce";
    case CollectiveOp::kAllGather: return "all_gather";
    case CollectiveOp::kReduceScatter: return "reduce_scatter";
    case CollectiveOp::kAllToAll: return "all_to_all";
    case CollectiveOp::kBroadcast: return "broadcast";
    case CollectiveOp::kReduce: return "reduce";
    case CollectiveOp::kSendRecv: return "send_recv";
  }
  return "?";
}

// nccl-tests' bus-bandwidth factor (busbw = algbw x factor).
inline double bus_factor(CollectiveOp op, int64_t n) {
  const auto nn = static_cast<double>(n);
  if (op == CollectiveOp::kAllReduce) return 2.0 * (nn - 1) / nn;
  if (op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllToAll)
    return (nn - 1) / nn;
  return 1.0;
}

// A copy of a chunk: (holder, chunk) as one key, holder a group rank or a switch pseudo-rank.
inline int64_t copy_key(int32_t holder, int32_t chunk) {
  return (static_cast<int64_t>(holder) << 32) | static_cast<int64_t>(static_cast<uint32_t>(chunk));
}

}  // namespace trainsim::models::collectives::internal
