// GPUs cabled directly to every other GPU of the server, without a switch: AMD MI300X (8 OAMs,
// 7 Infinity Fabric links each, 64 GB/s per direction per link) and Intel Gaudi (RoCE ports
// between every pair). Each pair is one cable of `link_bandwidth` per direction.
// Closed forms: cables g (g - 1) / 2, GPU diameter 1, bisection floor(g/2) ceil(g/2) x link.
#include "topology/builder.hpp"
#include "topology/detail/servers.hpp"

namespace trainsim::topology {
namespace {

struct Params {
  int64_t gpus_per_node = 8;
  sim::Bandwidth link_bandwidth;
  sim::Time link_latency;
  std::string link_kind;
};

const sim::config::Schema<Params>& schema() {
  static const sim::config::Schema<Params> s = [] {
    sim::config::Schema<Params> s("p2p_full_mesh", "GPUs cabled to each other directly (AMD/Intel style).");
    s.integer("gpus_per_node", &Params::gpus_per_node, 1, 64, 8, "GPUs per server.")
        .unit("link_bandwidth", &Params::link_bandwidth, &sim::config::read_bandwidth, "bandwidth", std::nullopt,
              "Per-pair, per-direction bandwidth (MI300X Infinity Fabric: 64GBps).")
        .unit("link_latency", &Params::link_latency, &sim::config::read_time, "duration", "1us",
              "Latency of one GPU-GPU hop.")
        .string("link_kind", &Params::link_kind, "xgmi", "Label of the links (\"xgmi\", \"roce\", ...).");
    return s;
  }();
  return s;
}

std::vector<ParamDoc> docs() { return param_docs(schema()); }

ServerFabric server(const sim::config::Json& j, const std::string& path) {
  Params p;
  schema().parse(j, path, p);
  ServerFabric f;
  f.gpus_per_node = p.gpus_per_node;
  f.shape_path = path + ".gpus_per_node";
  f.add = [p](Topology& t, int32_t server, int64_t first_gpu, int64_t gpus) {
    std::vector<Vertex> out;
    for (int64_t l = 0; l < gpus; ++l) {
      out.push_back(
          t.add_node(NodeKind::kGpu, detail::numbered("gpu", first_gpu + l), server, static_cast<int32_t>(l)));
      for (size_t o = 0; o + 1 < out.size(); ++o)
        t.add_cable(out[o], out.back(), p.link_bandwidth, p.link_latency, p.link_kind);
    }
    return out;
  };
  return f;
}

}  // namespace
}  // namespace trainsim::topology

TRAINSIM_REGISTER_NODE_TOPOLOGY(p2p_full_mesh, "p2p_full_mesh",
                                "GPUs cabled directly to every other GPU of the server (AMD MI300X, Intel Gaudi)",
                                ::trainsim::topology::docs, ::trainsim::topology::server)
