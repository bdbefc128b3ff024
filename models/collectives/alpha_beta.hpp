#pragma once
// Hierarchical alpha-beta collective model (Thakur et al. 2005 cost forms; NCCL ring and double
// binary tree). Inside a node ranks talk over NVLink/NVSwitch; across nodes each rank of a group
// in a node drives its own NIC rail (8 NICs per DGX node), so a group with g ranks per node gets
// g NICs of bandwidth between nodes. The slower of the two segments bounds a ring's bus bandwidth.
// An all-to-all is no ring: every rank sends its blocks straight to their owners at once, the
// (q-1)/n of its buffer for its own node over NVLink and the (n-q)/n for the other nodes through
// its own NIC share, whichever takes longer (q = ranks per node).
// All-reduce, all-gather, reduce-scatter, broadcast and reduce take NCCL's choice and time
// (nccl_tuning.hpp: algorithm x protocol x channels, calibrated per cluster) plus the cluster's
// collective_launch.

#include <memory>
#include <optional>

#include "models/collectives/comm_model.hpp"
#include "models/collectives/nccl_tuning.hpp"
#include "models/hardware/cluster_spec.hpp"

namespace trainsim::models::collectives {

class AlphaBetaModel final : public CommModel {
 public:
  explicit AlphaBetaModel(const hardware::ClusterSpec& cluster, NcclOverrides overrides = {});
  sim::Time collective(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const override;
  sim::Time p2p(sim::Bytes bytes, bool cross_node) const override;
  std::string algorithm(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const override;

  // One algorithm forced (tree: all-reduce across nodes only).
  sim::Time ring_time(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const { return ring(op, bytes, g); }
  sim::Time tree_time(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const { return tree(op, bytes, g); }
  // The hierarchical all-reduce (algorithms/hierarchical.cpp) across nodes of g.per_node ranks:
  // ring reduce-scatter inside each node, ring all-reduce of each 1/per_node shard between the
  // nodes (one rank per node on its own NIC share), ring all-gather inside each node. Pipelined
  // in slices as the flow network runs the plan, the phases overlap: the NVLink's two passes or
  // the NIC's ring, whichever is slower, and one slice's share of the other. Alpha-beta terms
  // (NCCL has no such algorithm).
  sim::Time hierarchical_time(sim::Bytes bytes, const GroupPlacement& g) const;
  // NCCL's choice for the op on this group (nullopt: all-to-all, send/recv, one rank, or nothing
  // NCCL runs under the overrides).
  std::optional<NcclChoice> nccl_choice(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g,
                                        std::optional<NcclAlgorithm> only = std::nullopt) const;
  // Bus bandwidth of a ring over the group (per rank, per direction).
  sim::Bandwidth ring_bus_bandwidth(const GroupPlacement& g) const;

 private:
  // Fraction of a NIC each GPU owns when all GPUs of a node communicate at once (<= 1).
  double nic_share() const;
  sim::Time ring(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const;
  sim::Time tree(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const;
  sim::Time all_to_all(sim::Bytes bytes, const GroupPlacement& g) const;
  sim::Time uncached(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const;
  hardware::ClusterSpec c_;
  NcclOverrides overrides_;
  bool nvls_ = false;
  // collective()'s answers by (op, bytes, size, per_node): a job asks the same few thousand times
  // (NCCL's table is 21 entries per call). Shared by copies (same cluster), thread-safe.
  struct Memo;
  std::shared_ptr<Memo> memo_;
};

}  // namespace trainsim::models::collectives
