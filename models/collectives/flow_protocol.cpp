// NCCL's protocols on the flow network. The flow network moves a plan's bytes over links whose
// capacity is what the Simple protocol achieves (the cluster's measured NVLink and NIC
// efficiencies), so a protocol that reaches less, per NCCL's calibrated table, puts more bytes
// on the wire: wire_factor = the plan's idle-network bandwidth / the table's bandwidth (at least
// 1; LL's flags alone double its bytes). LL and LL128 are limited by the GPU threads that poll
// their flags rather than by the link, so under contention this charges them link capacity they
// do not use; they run latency-bound sizes, where it matters little. Per-step latencies come
// from the same table (nccl_steps).
#include <algorithm>
#include <limits>

#include "models/collectives/flow_collective.hpp"

namespace trainsim::models::collectives {

std::optional<NcclAlgorithm> nccl_algorithm_of(const std::string& plan, const Group& group) {
  if (plan == "ring") return NcclAlgorithm::kRing;
  if (plan == "double_binary_tree") return NcclAlgorithm::kTree;
  if (plan == "nvls") return group.node_count() > 1 ? NcclAlgorithm::kNvlsTree : NcclAlgorithm::kNvls;
  if (plan == "halving_doubling") return NcclAlgorithm::kPat;
  return std::nullopt;
}

TransferCost transfer_cost(const NcclChoice& choice, CollectiveOp op, const NcclSystem& s,
                           const hardware::ClusterSpec& c, const Group& group) {
  const NcclEntry e = nccl_entry(op, choice.algorithm, choice.protocol, s);
  const NcclSteps steps = nccl_steps(op, choice.algorithm, choice.protocol, s);
  TransferCost cost;
  cost.protocol_latency = true;
  cost.step_intra = sim::Time::from_seconds_ceil(steps.intra_us * 1e-6);
  cost.step_inter = sim::Time::from_seconds_ceil(steps.inter_us * 1e-6);
  const bool rootless =
      op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
  if (choice.algorithm == NcclAlgorithm::kRing && s.nodes > 1 && rootless) {
    // NCCL's ring latency is its chunk's journey, each hop's own latency in turn (tuning.cc:
    // intra-node steps x intra + inter-node steps x inter), added to the bandwidth term. A ring
    // on the flow network runs in lockstep, paced by its slowest hop, so every step pays the
    // journey's mean step latency, and a connection's next step does not hide it (queue_credit).
    const double per_step =
        (e.latency_us - steps.base_us) / ((op == CollectiveOp::kAllReduce ? 2.0 : 1.0) * (s.ranks - 1));
    cost.step_intra = cost.step_inter = sim::Time::from_seconds_ceil(per_step * 1e-6);
    cost.queue_credit = false;
  }
  // Trees, PAT and NVLS stream their buffer through each hop: Simple in its buffer steps (NCCL_STEPS
  // = 8 slots of a 4 MiB connection buffer, init.cc DEFAULT_BUFFSIZE: 512 KiB), LL and LL128 line
  // by line as each lands (one pass of a channel's threads: LL 512 threads x 8 bytes of data = 4 KiB,
  // LL128 640 threads x 120 bytes = 75 KiB; device.h). A ring gains only latency from slicing and
  // runs unsliced.
  if (choice.algorithm != NcclAlgorithm::kRing) {
    static constexpr int64_t kSlice[kProtocols] = {4 * 1024, 640 * 120, kSimpleSliceBytes};
    cost.slice_bytes = sim::Bytes(kSlice[static_cast<int>(choice.protocol)]);
  }
  if (e.bandwidth_GBps <= 0.0) return cost;
  const bool tree = choice.algorithm == NcclAlgorithm::kTree;
  const bool nvls = choice.algorithm == NcclAlgorithm::kNvls || choice.algorithm == NcclAlgorithm::kNvlsTree;
  if (choice.algorithm != NcclAlgorithm::kRing && !tree && !nvls) {
    // PAT: its plan runs Simple at link speed; another protocol moves its bytes at the table's
    // ratio to Simple for the same algorithm.
    const NcclEntry simple = nccl_entry(op, choice.algorithm, Protocol::kSimple, s);
    const double ratio = simple.bandwidth_GBps > 0.0 ? simple.bandwidth_GBps / e.bandwidth_GBps : 1.0;
    cost.wire_factor = std::max(1.0 / payload_efficiency(choice.protocol), ratio);
    return cost;
  }
  const double n = group.size;
  const int32_t m = group.node_count(), g = std::max(1, detail::fewest_per_node(group));
  const double nvlink = c.nvlink_bandwidth.gbyte_per_second() * c.nvlink_efficiency;
  const double nic = c.nic_bandwidth.gbyte_per_second() * c.nic_efficiency * c.nic_share();  // a GPU's share
  double idle;  // the plan's algorithm bandwidth on an idle flow network, GB/s
  if (tree) {
    // NCCL's double binary tree, reduced up and broadcast down every channel's chain through a
    // server's g GPUs: over the channels (each chain headed by another GPU) a GPU's NVLink moves
    // 2 (g - 1) / g of the buffer each way. Between two servers a NIC moves it once each way;
    // across more, a server inner in one tree and a leaf in the other moves it twice. The
    // table's tree is slower than that (its per-channel cap and 0.92 of the link, tuning.cc):
    // the tree kernels' pace, charged as bytes on the wire as for rings and NVLS. Its correction
    // by size is left out: the flow network's hops already pay for the pipeline at small sizes.
    // One GPU per server: the NICs alone.
    idle = g > 1 ? nvlink * g / (2.0 * (g - 1)) : std::numeric_limits<double>::infinity();
    if (m > 1) idle = std::min(idle, nic * g / (m > 2 ? 2.0 : 1.0));
  } else if (nvls) {
    // Each rank sends its buffer into the switch and receives the result (all-gather: the
    // other ranks' blocks) at NVLink speed. Across servers (NVLS-tree) each of a server's g ranks
    // also all-reduces its 1/g shard over the network on its NIC share.
    idle = op == CollectiveOp::kAllGather ? nvlink * n / (n - 1.0) : nvlink;
    if (m > 1) idle = std::min(idle, nic * g / bus_bandwidth_factor(CollectiveOp::kAllReduce, m));
  } else {
    // A ring: its bus bandwidth over the slower of NVLink and the NIC share.
    const double bus = m > 1 ? std::min(nvlink, nic * g) : nvlink;
    idle = bus / bus_bandwidth_factor(op, group.size);
  }
  cost.wire_factor = std::max(1.0 / payload_efficiency(choice.protocol), idle / e.bandwidth_GBps);
  return cost;
}

}  // namespace trainsim::models::collectives
