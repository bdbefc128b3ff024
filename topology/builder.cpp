#include "topology/builder.hpp"

#include <algorithm>
#include <sstream>

#include "sim/error.hpp"

namespace trainsim::topology {

std::string BuilderInfo::markdown() const {
  std::ostringstream out;
  out << "### " << name << "\n\n" << description << (is_node_builder() ? " (node builder)" : "") << "\n\n";
  out << "| key | type | default | description |\n|---|---|---|---|\n";
  for (const ParamDoc& p : params()) {
    out << "| `" << p.key << "` | " << sim::config::markdown_cell(p.type) << " | ";
    if (p.required)
      out << "required";
    else if (p.fallback.empty())
      out << "-";
    else
      out << "`" << sim::config::markdown_cell(p.fallback) << "`";
    out << " | " << sim::config::markdown_cell(p.doc) << " |\n";
  }
  return out.str();
}

std::vector<std::string> node_builder_names() {
  return BuilderRegistry::instance().names_if([](const BuilderInfo& b) { return b.is_node_builder(); });
}

const BuilderInfo& get_node_builder(const std::string& name, const std::string& path) {
  const BuilderInfo* b = BuilderRegistry::instance().find(name);
  if (b == nullptr) sim::throw_unknown_name(name, path, node_builder_names(), "node builder");
  if (!b->is_node_builder()) {
    std::string msg = "\"";
    msg += name;
    msg += "\" is not a node builder (it builds a whole cluster)";
    throw ConfigError(path, msg, "valid: " + sim::config::join(node_builder_names()));
  }
  return *b;
}

Topology build_single_server(const ServerFabric& fabric, int64_t gpus, const std::string& builder) {
  if (gpus > fabric.gpus_per_node) {
    std::ostringstream msg;
    msg << gpus << " GPUs do not fit one " << builder << " server of " << fabric.gpus_per_node << " GPUs";
    std::ostringstream hint;
    hint << "use at most " << fabric.gpus_per_node
         << " GPUs, or a multi-node builder (fat_tree, rail_optimized, rail_only, dragonfly_plus) with \"intra\": "
            "{\"builder\": \""
         << builder << "\", ...}";
    throw ConfigError(fabric.shape_path, msg.str(), hint.str());
  }
  Topology t;
  fabric.add(t, 0, 0, gpus);
  t.set_gpus_per_server(fabric.gpus_per_node);
  t.set_in_network_reduction(fabric.in_network_reduction);
  return t;
}

}  // namespace trainsim::topology
