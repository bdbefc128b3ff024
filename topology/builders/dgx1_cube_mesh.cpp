// DGX-1 hybrid cube-mesh: 8 GPUs in two fully connected quads (0-3, 4-7) with GPU i also cabled
// to GPU i + 4; no NVSwitch, so GPUs forward for each other. NVLink 1 (P100): 4 links per GPU,
// one per neighbour, 20 GB/s per direction each. NVLink 2 (V100): 6 links per GPU; the pairs
// 0-3, 0-4, 1-2, 1-5, 2-3, 4-7, 5-6, 6-7 are doubled (nvidia-smi topo -m on a DGX-1V: NV2),
// 25 GB/s per direction per link. A doubled pair is one cable of twice the bandwidth.
// Closed forms: cables 16, NVLinks 16 (gen 1) or 24 (gen 2); GPU diameter 2; bisection between
// the quads: 4 (gen 1) or 6 (gen 2) links.
#include "topology/builder.hpp"
#include "topology/detail/servers.hpp"

namespace trainsim::topology {
namespace {

struct Params {
  int64_t nvlink_gen = 2;
  std::optional<sim::Bandwidth> link_bandwidth;
  sim::Time nvlink_latency;
};

struct Pair {
  int a, b, gen2_links;
};
constexpr Pair kPairs[] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1}, {1, 5, 2}, {2, 3, 2},
                           {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1}, {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2}};

const sim::config::Schema<Params>& schema() {
  static const sim::config::Schema<Params> s = [] {
    sim::config::Schema<Params> s("dgx1_cube_mesh", "DGX-1 hybrid cube-mesh of 8 GPUs.");
    s.integer("nvlink_gen", &Params::nvlink_gen, 1, 2, 2, "NVLink generation: 1 (DGX-1 P100) or 2 (DGX-1 V100).")
        .custom("link_bandwidth", "bandwidth or null", std::string("null"),
                "Per-link, per-direction bandwidth; null = 20GBps (NVLink 1) or 25GBps (NVLink 2).",
                [](Params& p, const sim::config::Json& j, const std::string& path) {
                  if (j.is_null())
                    p.link_bandwidth.reset();
                  else
                    p.link_bandwidth = sim::config::read_bandwidth(j, path);
                })
        .unit("nvlink_latency", &Params::nvlink_latency, &sim::config::read_time, "duration", "1us",
              "Latency of one GPU-GPU NVLink hop.");
    return s;
  }();
  return s;
}

std::vector<ParamDoc> docs() { return param_docs(schema()); }

ServerFabric server(const sim::config::Json& j, const std::string& path) {
  Params p;
  schema().parse(j, path, p);
  const sim::Bandwidth link = p.link_bandwidth.value_or(sim::Bandwidth::gbyte_per_s(p.nvlink_gen == 1 ? 20.0 : 25.0));
  ServerFabric f;
  f.gpus_per_node = 8;
  f.shape_path = path;
  f.add = [p, link](Topology& t, int32_t server, int64_t first_gpu, int64_t gpus) {
    std::vector<Vertex> out;
    for (int64_t l = 0; l < gpus; ++l)
      out.push_back(
          t.add_node(NodeKind::kGpu, detail::numbered("gpu", first_gpu + l), server, static_cast<int32_t>(l)));
    for (const Pair& q : kPairs)
      if (q.b < gpus)
        t.add_cable(out[static_cast<size_t>(q.a)], out[static_cast<size_t>(q.b)],
                    link * static_cast<double>(p.nvlink_gen == 1 ? 1 : q.gen2_links), p.nvlink_latency, "nvlink");
    return out;
  };
  return f;
}

}  // namespace
}  // namespace trainsim::topology

TRAINSIM_REGISTER_NODE_TOPOLOGY(dgx1_cube_mesh, "dgx1_cube_mesh",
                                "DGX-1 hybrid cube-mesh of 8 GPUs over NVLink 1 (P100) or NVLink 2 (V100)",
                                ::trainsim::topology::docs, ::trainsim::topology::server)
