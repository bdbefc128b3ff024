#include "models/collectives/alpha_beta.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <unordered_map>

#include "sim/config/schema.hpp"
#include "sim/error.hpp"

namespace trainsim::models::collectives {

struct AlphaBetaModel::Memo {
  struct Key {
    int64_t bytes;
    int64_t size, per_node;
    int op;
    bool operator==(const Key&) const = default;
  };
  struct Hash {
    size_t operator()(const Key& k) const {
      uint64_t h = static_cast<uint64_t>(k.bytes) * 0x9e3779b97f4a7c15ull;
      h ^=
          (static_cast<uint64_t>(k.size) << 20 ^ static_cast<uint64_t>(k.per_node) << 4 ^ static_cast<uint64_t>(k.op)) +
          0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
      return static_cast<size_t>(h);
    }
  };
  std::mutex mutex;
  std::unordered_map<Key, sim::Time, Hash> times;
};

AlphaBetaModel::AlphaBetaModel(const hardware::ClusterSpec& cluster, NcclOverrides overrides)
    : c_(cluster), overrides_(overrides), nvls_(hardware::nvls_capable(cluster)), memo_(std::make_shared<Memo>()) {}

std::optional<NcclChoice> AlphaBetaModel::nccl_choice(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g,
                                                      std::optional<NcclAlgorithm> only) const {
  if (g.size <= 1 || op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv) return std::nullopt;
  const NcclSystem s = nccl_system(c_, g.size, std::min(g.per_node, g.size), nvls_, overrides_.channels);
  return nccl_choose(op, bytes, s, overrides_.protocol, only);
}

sim::Bandwidth AlphaBetaModel::ring_bus_bandwidth(const GroupPlacement& g) const {
  const sim::Bandwidth nvlink = c_.nvlink_bandwidth * c_.nvlink_efficiency;
  if (g.nodes() <= 1) return nvlink;
  // Every GPU of a node runs a symmetric group at the same time (Megatron's rank layout), so each
  // GPU owns nics_per_node / gpus_per_node of the node's NICs (one rail each on a DGX; half a NIC
  // on a 4-NIC, 8-GPU node), and the g ranks of this group in a node drive g such shares.
  const sim::Bandwidth inter = c_.nic_bandwidth * (c_.nic_efficiency * nic_share() * static_cast<double>(g.per_node));
  return std::min(nvlink, inter);
}

CollectiveOp parse_collective_op(const std::string& text, const std::string& path) {
  static const std::vector<std::string> names = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                 "broadcast",  "reduce",     "send_recv"};
  const std::string v = sim::config::read_enum(sim::config::Json(text), path, names);
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == v) return static_cast<CollectiveOp>(i);
  return CollectiveOp::kAllReduce;
}

namespace {
int64_t steps(CollectiveOp op, int64_t n) { return op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1; }
}  // namespace

sim::Time AlphaBetaModel::ring(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const {
  const int64_t n = g.size;
  // Per-step latency: steps that cross a node boundary pay the NIC latency.
  const int64_t s = steps(op, n);
  const int64_t nodes = g.nodes();
  const int64_t cross = nodes <= 1 ? 0 : s * nodes / n;  // fraction of ring hops that leave a node
  const sim::Time lat = c_.collective_launch + c_.nvlink_latency * (s - cross) + c_.nic_latency * cross;
  // Bytes each rank pushes through its slowest link: the bus-bandwidth factor times the buffer.
  const sim::Bytes moved = bytes.scaled(bus_bandwidth_factor(op, n));
  return lat + moved / ring_bus_bandwidth(g);
}

sim::Time AlphaBetaModel::tree(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const {
  // NCCL double binary tree across nodes (all-reduce only): intra-node chains plus a log-depth
  // tree over nodes; each rank sends and receives about 2x the buffer at the inter-node rate.
  TRAINSIM_ASSERT(op == CollectiveOp::kAllReduce, "tree is an all-reduce algorithm");
  const int64_t nodes = g.nodes();
  const int64_t depth = static_cast<int64_t>(std::ceil(std::log2(static_cast<double>(std::max<int64_t>(nodes, 2)))));
  const sim::Time lat =
      c_.collective_launch + c_.nic_latency * (2 * depth) + c_.nvlink_latency * (2 * (g.per_node - 1));
  return lat + bytes.scaled(2.0) / ring_bus_bandwidth(g);
}

sim::Time AlphaBetaModel::hierarchical_time(sim::Bytes bytes, const GroupPlacement& g) const {
  const int64_t m = g.nodes(), q = std::min(g.per_node, g.size);
  if (m <= 1) return ring(CollectiveOp::kAllReduce, bytes, g);
  const GroupPlacement node{q, q}, across{m, 1};
  const sim::Time launch = c_.collective_launch;
  // Each GPU's NVLink carries the reduce-scatter and the all-gather inside its node, its NIC the
  // ring across nodes (with its per-step latencies): the phases overlap, the slower sets the
  // pace. The plan moves the shard as the ring's m blocks, each in S slices of 512 KiB (at most
  // 64, as the flow network pipelines non-ring plans): a block crosses nodes slice by slice as
  // its reduce-scatter lands, so 1/S of the reduce-scatter comes first (all of it with one
  // slice), and the all-gather follows each block as it arrives final.
  const sim::Time scatter = q > 1 ? ring(CollectiveOp::kReduceScatter, bytes, node) - launch : sim::Time::zero();
  const sim::Time gather = q > 1 ? ring(CollectiveOp::kAllGather, bytes, node) - launch : sim::Time::zero();
  const sim::Time between = ring(CollectiveOp::kAllReduce, sim::Bytes((bytes.count() + q - 1) / q), across) - launch;
  const int64_t block = bytes.count() / (q * m);
  const int64_t slices =
      std::clamp<int64_t>((block + kSimpleSliceBytes - 1) / kSimpleSliceBytes, 1, kMaxPipelineSlices);
  return launch + std::max(scatter + gather, between) +
         sim::Time::from_seconds_ceil(scatter.seconds() / static_cast<double>(slices));
}

sim::Time AlphaBetaModel::all_to_all(sim::Bytes bytes, const GroupPlacement& g) const {
  const auto n = static_cast<double>(g.size), q = static_cast<double>(std::min(g.per_node, g.size));
  const sim::Time intra = bytes.scaled((q - 1.0) / n) / (c_.nvlink_bandwidth * c_.nvlink_efficiency);
  if (g.nodes() <= 1) return c_.collective_launch + c_.nvlink_latency + intra;
  // All GPUs of a node send at once (the group's copies run beside it): each has its NIC share.
  const sim::Time inter = bytes.scaled((n - q) / n) / (c_.nic_bandwidth * (c_.nic_efficiency * nic_share()));
  return c_.collective_launch + c_.nic_latency + std::max(intra, inter);
}

sim::Time AlphaBetaModel::collective(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const {
  if (g.size <= 1 || bytes.count() == 0) return sim::Time::zero();
  const Memo::Key key{bytes.count(), g.size, g.per_node, static_cast<int>(op)};
  {
    const std::lock_guard lock(memo_->mutex);
    if (const auto it = memo_->times.find(key); it != memo_->times.end()) return it->second;
  }
  const sim::Time t = uncached(op, bytes, g);
  const std::lock_guard lock(memo_->mutex);
  if (memo_->times.size() >= (size_t{1} << 16)) memo_->times.clear();
  memo_->times.emplace(key, t);
  return t;
}

sim::Time AlphaBetaModel::uncached(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const {
  if (op == CollectiveOp::kAllToAll) return all_to_all(bytes, g);
  if (const auto choice = nccl_choice(op, bytes, g))
    return c_.collective_launch + sim::Time::from_seconds_ceil(choice->time_us * 1e-6);
  const sim::Time r = ring(op, bytes, g);
  if (op == CollectiveOp::kAllReduce && g.nodes() > 1) return std::min(r, tree(op, bytes, g));
  return r;
}

std::string AlphaBetaModel::algorithm(CollectiveOp op, sim::Bytes bytes, const GroupPlacement& g) const {
  if (op == CollectiveOp::kAllToAll) return "all_to_all_direct";
  if (const auto choice = nccl_choice(op, bytes, g))
    return std::string(to_string(choice->algorithm)) + "/" + to_string(choice->protocol) + " x" +
           std::to_string(choice->channels);
  if (op == CollectiveOp::kAllReduce && g.nodes() > 1 && tree(op, bytes, g) < ring(op, bytes, g)) return "tree";
  return "ring";
}

double AlphaBetaModel::nic_share() const { return c_.nic_share(); }

sim::Time AlphaBetaModel::p2p(sim::Bytes bytes, bool cross_node) const {
  if (bytes.count() == 0) return sim::Time::zero();
  // All GPUs of a stage send at once: each gets its share of the node's NICs.
  if (cross_node)
    return c_.collective_launch + c_.nic_latency + bytes / (c_.nic_bandwidth * (c_.nic_efficiency * nic_share()));
  return c_.collective_launch + c_.nvlink_latency + bytes / (c_.nvlink_bandwidth * c_.nvlink_efficiency);
}

}  // namespace trainsim::models::collectives
