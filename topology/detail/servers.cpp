#include "topology/detail/servers.hpp"

#include <sstream>

#include "sim/error.hpp"

namespace trainsim::topology::detail {

std::string numbered(const char* prefix, int64_t i) {
  std::string out(prefix);
  out += std::to_string(i);
  return out;
}

std::string numbered(const char* prefix, int64_t i, int64_t j) {
  std::string out = numbered(prefix, i);
  out += '_';
  out += std::to_string(j);
  return out;
}

ServerFabric resolve_servers(const ServerParams& p, const std::string& path) {
  if (p.intra.is_null()) return get_node_builder("nvswitch_node", path).server(p.shorthand, path);
  if (!p.shorthand.empty()) {
    const std::string key = p.shorthand.begin().key();
    throw ConfigError(path + "." + key, "cannot be combined with \"intra\"",
                      "move it into the \"intra\" object, or drop \"intra\"");
  }
  const std::string intra = path + ".intra";
  const auto it = p.intra.find("builder");
  if (it == p.intra.end())
    throw ConfigError(intra + ".builder", "missing required key",
                      "name a node builder: " + sim::config::join(node_builder_names()));
  const std::string name = sim::config::read_string(*it, intra + ".builder");
  const BuilderInfo& b = get_node_builder(name, intra + ".builder");
  sim::config::Json params = p.intra;
  params.erase("builder");
  return b.server(params, intra);
}

void check_whole_servers(int64_t gpus, const ServerFabric& f) {
  if (gpus % f.gpus_per_node == 0) return;
  std::ostringstream msg, hint;
  msg << gpus << " GPUs are not a whole number of " << f.gpus_per_node << "-GPU servers";
  hint << "use a multiple of " << f.gpus_per_node << " GPUs";
  throw ConfigError(f.shape_path, msg.str(), hint.str());
}

std::vector<std::vector<Vertex>> add_servers(Topology& t, const ServerFabric& f, int64_t gpus) {
  std::vector<std::vector<Vertex>> servers;
  const int64_t n = gpus / f.gpus_per_node;
  servers.reserve(static_cast<size_t>(n));
  for (int64_t s = 0; s < n; ++s)
    servers.push_back(f.add(t, static_cast<int32_t>(s), s * f.gpus_per_node, f.gpus_per_node));
  t.set_gpus_per_server(f.gpus_per_node);
  t.set_in_network_reduction(f.in_network_reduction);
  return servers;
}

}  // namespace trainsim::topology::detail
