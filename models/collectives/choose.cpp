// The "auto" algorithm choice: choose_algorithm and the ring's latency-bound size.
#include <algorithm>
#include <bit>
#include <cmath>

#include "models/collectives/collective.hpp"
#include "models/collectives/registry_internal.hpp"

namespace trainsim::models::collectives {

namespace {
// Reference figures (the chooser sees no cluster).
// Per-step latencies: NCCL's tuning model for the Simple protocol (NVIDIA/nccl
// src/graph/tuning.cc, hwLat, ring row): 3.4 us per NVLink step, 9.6 us per network step. Check:
// 14 NVLink steps = 47.6 us for an 8-GPU all-reduce; nccl-tests measures 43.8 us at 32 KiB on
// 8 x A100 (shared/data/collectives_dev.json, mle_a100_8gpu_allreduce_32768).
// Bus bandwidths, same file: 234.9 GB/s all-reduce busbw plateau on 8 x A100 with NVSwitch
// (mle_a100_8gpu_allreduce_17179869184), and 24 GB/s inter-node busbw per 200 Gb/s HDR NIC, one
// NIC per GPU on a DGX A100 (nccl_412_a800_intra_inter).
constexpr double kNvlinkStepSeconds = 3.4e-6;
constexpr double kNetworkStepSeconds = 9.6e-6;
constexpr double kNvlinkBusBytesPerSecond = 235e9;
constexpr double kNetworkBusBytesPerSecond = 24e9;
}  // namespace

sim::Bytes ring_latency_bound_bytes(CollectiveOp op, const Group& group) {
  const int64_t n = group.size, m = group.node_count();
  if (n <= 1) return sim::Bytes(0);
  // NCCL's step counts: all-reduce 2(n-1) steps of which 2(m-1) cross servers, others n-1 and m-1.
  const int64_t steps = op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
  const int64_t cross = op == CollectiveOp::kAllReduce ? 2 * (m - 1) : m - 1;
  const double latency =
      static_cast<double>(steps - cross) * kNvlinkStepSeconds + static_cast<double>(cross) * kNetworkStepSeconds;
  const double bus = m > 1 ? kNetworkBusBytesPerSecond : kNvlinkBusBytesPerSecond;
  return sim::Bytes(std::llround(latency * bus / bus_bandwidth_factor(op, n)));
}

std::string choose_algorithm(CollectiveOp op, sim::Bytes bytes, const Group& group) {
  const int32_t n = group.size, m = group.node_count(), per_node = group.ranks_per_node();
  const bool small = bytes < ring_latency_bound_bytes(op, group);
  switch (op) {
    case CollectiveOp::kSendRecv: return "send_recv";
    case CollectiveOp::kAllToAll: {
      // Aggregating along rails pays when the block per peer is below the network's
      // bandwidth-delay product (one step latency x bandwidth): the message is latency-bound.
      const double block = static_cast<double>(bytes.count()) / std::max(n, 1);
      const bool latency_bound = block < kNetworkStepSeconds * kNetworkBusBytesPerSecond;
      return m > 1 && per_node >= 2 && latency_bound ? "all_to_all_hierarchical" : "all_to_all_direct";
    }
    case CollectiveOp::kAllReduce:
      // A whole torus (TPU-style fabric): the dimension-wise torus all-reduce.
      if (group.dims[0] > 0) return "torus";
      if (m == 1 && group.nvls_capable && n >= 2) return "nvls";
      // NCCL has no recursive halving-doubling: inside one server it runs rings at every size
      // (its LL / LL128 protocols cover small messages); across servers a tree below the ring's
      // latency-bound size.
      // Across servers a tree below the ring's latency-bound size, else NCCL's rings (one channel
      // per GPU of a server, PXN routing: every NIC busy). "hierarchical" stays available by name.
      if (small && m > 1) return "double_binary_tree";
      return "ring";
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
      // Rings, except small messages over one rank per server, where NCCL 2.23+ runs PAT
      // (logarithmic steps, like halving-doubling).
      return small && m > 1 && per_node == 1 && std::has_single_bit(static_cast<uint32_t>(n)) ? "halving_doubling"
                                                                                              : "ring";
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce: return small ? "binomial_tree" : "ring";
  }
  return "ring";
}

}  // namespace trainsim::models::collectives
