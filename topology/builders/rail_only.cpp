// Rail-only network (Wang et al. 2023, "Rail-only: A Low-Cost High-Performance Network for
// Training LLMs with Trillion Parameters"): rail switch i joins GPU i of every server and there
// is no spine, so traffic between rails must cross NVLink inside a server (to the destination's
// rail at the source, as NCCL's PXN does, or from the source's rail at the destination). Each
// rail is one non-blocking switch here (a large rail is itself a non-blocking Clos).
// Closed forms (g GPUs, n servers, R = gpus_per_node rails): nodes = server nodes + R; cables =
// server cables + g; bisection (halves of whole servers) (g/2) x nic_bandwidth.
#include "topology/builder.hpp"
#include "topology/detail/servers.hpp"

namespace trainsim::topology {
namespace {

struct Params {
  detail::ServerParams server;
  sim::Bandwidth nic_bandwidth;
  sim::Time link_latency;
};

const sim::config::Schema<Params>& schema() {
  static const sim::config::Schema<Params> s = [] {
    sim::config::Schema<Params> s("rail_only", "Rail switches without spines.");
    detail::add_server_fields(s);
    s.unit("nic_bandwidth", &Params::nic_bandwidth, &sim::config::read_bandwidth, "bandwidth", std::nullopt,
           "Per-GPU NIC bandwidth per direction.")
        .unit("link_latency", &Params::link_latency, &sim::config::read_time, "duration", "1us",
              "Latency of a NIC-rail switch hop.");
    return s;
  }();
  return s;
}

std::vector<ParamDoc> docs() { return param_docs(schema()); }

Topology build(const sim::config::Json& j, int64_t gpus, const std::string& path) {
  Params p;
  schema().parse(j, path, p);
  const ServerFabric fabric = detail::resolve_servers(p.server, path);
  detail::check_whole_servers(gpus, fabric);
  Topology t;
  const auto servers = detail::add_servers(t, fabric, gpus);
  for (int64_t rail = 0; rail < fabric.gpus_per_node; ++rail) {
    const Vertex sw = t.add_node(NodeKind::kLeaf, detail::numbered("rail", rail));
    for (const auto& server : servers)
      t.add_cable(server[static_cast<size_t>(rail)], sw, p.nic_bandwidth, p.link_latency, "ib");
  }
  if (servers.size() > 1) t.set_bisection(p.nic_bandwidth * static_cast<double>(gpus / 2));
  return t;
}

}  // namespace
}  // namespace trainsim::topology

TRAINSIM_REGISTER_TOPOLOGY(rail_only, "rail_only",
                           "Rail switches without spines: cross-rail traffic crosses NVLink inside a server first",
                           ::trainsim::topology::docs, ::trainsim::topology::build)
