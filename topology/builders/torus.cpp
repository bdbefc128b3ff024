// 2D or 3D torus with wraparound (TPU v4/v5p style): every GPU is a router cabled to its two
// neighbours in each dimension. GPU index i = x + X (y + Y z), dimension 0 fastest. A dimension
// of size 2 has one cable per pair (its wraparound is the same neighbour), size 1 none.
// Closed forms (N GPUs, shape n_k): cables sum_k (N / n_k) c(n_k) with c(n) = n (n >= 3), 1
// (n = 2), 0 (n = 1); diameter sum_k floor(n_k / 2); bisection (cut across the largest
// dimension n, into slabs): 2 N / n links for n >= 3, N / 2 for n = 2, times link_bandwidth.
// Routing: dimension order (routing.mode = "dimension_order") or equal-cost paths.
#include <algorithm>
#include <functional>
#include <numeric>
#include <sstream>

#include "sim/config/schema.hpp"
#include "topology/builder.hpp"
#include "topology/detail/servers.hpp"

namespace trainsim::topology {
namespace {

struct Params {
  std::vector<int64_t> shape;
  sim::Bandwidth link_bandwidth;
  sim::Time link_latency;
  int64_t gpus_per_node = 1;
};

const sim::config::Schema<Params>& schema() {
  static const sim::config::Schema<Params> s = [] {
    sim::config::Schema<Params> s("torus", "2D or 3D torus with wraparound.");
    s.custom("shape", "list of 2 or 3 integers >= 1", std::nullopt, "GPUs along each dimension, e.g. [4, 4, 4].",
             [](Params& p, const sim::config::Json& j, const std::string& path) {
               if (!j.is_array() || j.size() < 2 || j.size() > 3)
                 throw ConfigError(path, "expected a list of 2 or 3 dimensions, got " + sim::config::show(j),
                                   "write e.g. [4, 4] or [4, 4, 4]");
               p.shape.clear();
               for (size_t k = 0; k < j.size(); ++k) {
                 std::ostringstream at;
                 at << path << "[" << k << "]";
                 p.shape.push_back(sim::config::read_int(j[k], at.str(), 1, 65536));
               }
             })
        .unit("link_bandwidth", &Params::link_bandwidth, &sim::config::read_bandwidth, "bandwidth", std::nullopt,
              "Per-link, per-direction bandwidth (TPU v4 ICI: 50GBps).")
        .unit("link_latency", &Params::link_latency, &sim::config::read_time, "duration", "1us",
              "Latency of one GPU-GPU hop.")
        .integer("gpus_per_node", &Params::gpus_per_node, 1, 1024, 1,
                 "GPUs per host (groups consecutive GPUs into servers; no effect on links).");
    return s;
  }();
  return s;
}

std::vector<ParamDoc> docs() { return param_docs(schema()); }

Topology build(const sim::config::Json& j, int64_t gpus, const std::string& path) {
  Params p;
  schema().parse(j, path, p);
  const int64_t n = std::accumulate(p.shape.begin(), p.shape.end(), int64_t{1}, std::multiplies<>());
  if (n != gpus) {
    std::ostringstream msg, hint;
    for (size_t k = 0; k < p.shape.size(); ++k) msg << (k ? "x" : "a ") << p.shape[k];
    msg << " torus holds " << n << " GPUs, got " << gpus;
    hint << "use " << n << " GPUs or a shape whose product is " << gpus;
    throw ConfigError(path + ".shape", msg.str(), hint.str());
  }
  if (gpus % p.gpus_per_node != 0) {
    std::ostringstream msg;
    msg << gpus << " GPUs are not a whole number of " << p.gpus_per_node << "-GPU hosts";
    throw ConfigError(path + ".gpus_per_node", msg.str(), "use a divisor of the GPU count");
  }
  Topology t;
  for (int64_t i = 0; i < n; ++i)
    t.add_node(NodeKind::kGpu, detail::numbered("gpu", i), static_cast<int32_t>(i / p.gpus_per_node),
               static_cast<int32_t>(i % p.gpus_per_node));
  int64_t stride = 1;
  for (const int64_t size : p.shape) {
    for (int64_t i = 0; i < n && size >= 2; ++i) {
      const int64_t c = (i / stride) % size;
      if (size == 2 && c == 1) continue;  // the pair's one cable is added from c = 0
      const int64_t next = i + ((c + 1) % size - c) * stride;
      t.add_cable(t.gpu_node(static_cast<size_t>(i)), t.gpu_node(static_cast<size_t>(next)), p.link_bandwidth,
                  p.link_latency, "ici");
    }
    stride *= size;
  }
  t.set_gpus_per_server(p.gpus_per_node);
  t.set_torus_shape(p.shape);
  const int64_t largest = *std::max_element(p.shape.begin(), p.shape.end());
  if (n >= 2) t.set_bisection(p.link_bandwidth * static_cast<double>(largest == 2 ? n / 2 : 2 * n / largest));
  return t;
}

}  // namespace
}  // namespace trainsim::topology

TRAINSIM_REGISTER_TOPOLOGY(torus, "torus", "2D or 3D torus with wraparound, any shape (TPU style)",
                           ::trainsim::topology::docs, ::trainsim::topology::build)
