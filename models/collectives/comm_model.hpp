#pragma once
// The communication seam: how long a collective or a point-to-point transfer takes for a group
// placed on the cluster. The analytic hierarchical alpha-beta model implements it now; the
// flow-level network (topology/ + sim/flow) will implement the same interface.

#include <cstdint>
#include <string>

#include "sim/units.hpp"

namespace trainsim::models::collectives {

// kSendRecv is a point-to-point transfer (group = {src, dst}).
enum class CollectiveOp : uint8_t { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kReduce, kSendRecv };
// Inline so that the registry's algorithm files (trainsim_models_registry, linked after
// trainsim_models) can call it without an undefined reference.
inline const char* to_string(CollectiveOp op) {
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

// Where a communicator's ranks sit: `size` ranks, `per_node` of them in each node they span.
// Groups are symmetric under Megatron's rank order (tp innermost, then dp, then pp).
struct GroupPlacement {
  int64_t size = 1;
  int64_t per_node = 1;
  int64_t nodes() const { return (size + per_node - 1) / per_node; }
};

// nccl-tests' bus-bandwidth factor: busbw = algbw * factor, where algbw = size / time. All-reduce
// 2(n-1)/n; all-gather, reduce-scatter and all-to-all (n-1)/n; broadcast, reduce, send/recv 1.
inline double bus_bandwidth_factor(CollectiveOp op, int64_t n) {
  const double nn = static_cast<double>(n);
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * (nn - 1) / nn;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll: return (nn - 1) / nn;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
    case CollectiveOp::kSendRecv: return 1.0;
  }
  return 1.0;
}
// Parses "all_reduce", "all_gather", ... (ConfigError at `path` with the valid names).
CollectiveOp parse_collective_op(const std::string& text, const std::string& path);

class CommModel {
 public:
  virtual ~CommModel() = default;
  // Time of one collective where `bytes` is the per-rank buffer (nccl-tests "size").
  virtual sim::Time collective(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const = 0;
  // Time to move `bytes` from one GPU to another, inside a node or across nodes.
  virtual sim::Time p2p(sim::Bytes bytes, bool cross_node) const = 0;
  // Name of the algorithm chosen (for reports).
  virtual std::string algorithm(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const = 0;
};

}  // namespace trainsim::models::collectives
