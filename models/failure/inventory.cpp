#include "models/failure/inventory.hpp"

#include "sim/checked.hpp"
#include "topology/graph.hpp"
#include "topology/spec.hpp"

namespace trainsim::models::failure {

using sim::config::Json;

Json Inventory::to_json() const {
  Json j = Json::object();
  for (const auto& [k, v] : counts) j[k] = v;
  j["nodes"] = nodes;
  return j;
}

Inventory count_components(const workload::Job& job) {
  const int64_t gpn = std::max<int64_t>(1, job.cluster.gpus_per_node);
  Inventory inv;
  inv.nodes = (job.gpus + gpn - 1) / gpn;
  const topology::Topology t = topology::build_topology(
      hardware::network_spec(job.cluster), hardware::network_gpus(job.cluster, job.gpus), "cluster.network");
  // The topology may be built for whole servers (a job on part of one): scale fabric counts to
  // the job's share of its GPUs.
  const double share = t.gpu_count() > 0 ? static_cast<double>(job.gpus) / static_cast<double>(t.gpu_count()) : 1.0;
  int64_t nvswitches = 0, fabric = 0, cables = 0;
  for (topology::Vertex v = 0; v < t.node_count(); ++v) {
    const auto kind = t.node(v).kind;
    if (kind == topology::NodeKind::kNvSwitch) ++nvswitches;
    if (kind == topology::NodeKind::kLeaf || kind == topology::NodeKind::kSpine || kind == topology::NodeKind::kCore ||
        kind == topology::NodeKind::kRouter)
      ++fabric;
  }
  for (topology::LinkId l = 0; l < t.link_count(); l += 2) {
    const int32_t a = t.node(t.link_src(l)).server, b = t.node(t.link_dst(l)).server;
    if (a < 0 || b < 0 || a != b) ++cables;
  }
  auto scaled = [&](int64_t n) {
    return sim::checked_int64(std::round(static_cast<double>(n) * share), "inventory", "fewer GPUs");
  };
  inv.counts["gpu"] = job.gpus;
  inv.counts["hbm"] = job.gpus;
  inv.counts["nvswitch"] = scaled(nvswitches);
  inv.counts["nic"] = inv.nodes * job.cluster.nics_per_node;
  inv.counts["cable"] = scaled(cables);
  inv.counts["switch"] = std::max<int64_t>(fabric > 0 ? 1 : 0, scaled(fabric));
  inv.counts["host"] = inv.nodes;
  inv.counts["software"] = inv.nodes;
  inv.counts["storage"] = 1;
  return inv;
}

}  // namespace trainsim::models::failure
