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

BuilderRegistry& BuilderRegistry::mutable_instance() {
  static BuilderRegistry registry;
  return registry;
}

const BuilderRegistry& BuilderRegistry::instance() { return mutable_instance(); }

BuilderRegistry::Registrar::Registrar(BuilderInfo info) {
  auto& e = mutable_instance().entries_;
  e.push_back(std::move(info));
  std::sort(e.begin(), e.end(), [](const BuilderInfo& a, const BuilderInfo& b) { return a.name < b.name; });
}

std::vector<std::string> BuilderRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& b : entries_) out.push_back(b.name);
  return out;
}

std::vector<std::string> BuilderRegistry::node_builder_names() const {
  std::vector<std::string> out;
  for (const auto& b : entries_)
    if (b.is_node_builder()) out.push_back(b.name);
  return out;
}

namespace {
[[noreturn]] void unknown(const std::string& name, const std::string& path, const std::vector<std::string>& valid,
                          const char* what) {
  const std::string near = sim::config::did_you_mean(name, valid);
  std::string hint = near.empty() ? std::string() : "did you mean \"" + near + "\"? ";
  hint += "valid: ";
  hint += sim::config::join(valid);
  std::string msg = "unknown ";
  msg += what;
  msg += " \"";
  msg += name;
  msg += "\"";
  throw ConfigError(path, msg, hint);
}
}  // namespace

const BuilderInfo& BuilderRegistry::get(const std::string& name, const std::string& path) const {
  for (const auto& b : entries_)
    if (b.name == name) return b;
  unknown(name, path, names(), "topology builder");
}

const BuilderInfo& BuilderRegistry::get_node_builder(const std::string& name, const std::string& path) const {
  for (const auto& b : entries_) {
    if (b.name != name) continue;
    if (b.is_node_builder()) return b;
    std::string msg = "\"";
    msg += name;
    msg += "\" is not a node builder (it builds a whole cluster)";
    throw ConfigError(path, msg, "valid: " + sim::config::join(node_builder_names()));
  }
  unknown(name, path, node_builder_names(), "node builder");
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
