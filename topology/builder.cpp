#include "topology/builder.hpp"

#include <algorithm>

namespace trainsim::topology {

using sim::config::Json;

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

const BuilderInfo& BuilderRegistry::get(const std::string& name, const std::string& path) const {
  std::vector<std::string> names;
  for (const auto& b : entries_) {
    if (b.name == name) return b;
    names.push_back(b.name);
  }
  const std::string near = sim::config::did_you_mean(name, names);
  std::string hint = near.empty() ? std::string() : "did you mean \"" + near + "\"? ";
  hint += "valid: " + sim::config::join(names);
  throw ConfigError(path, "unknown topology builder \"" + name + "\"", hint);
}

Topology build_topology(const Json& spec, int64_t gpus, const std::string& path) {
  if (!spec.is_object()) throw ConfigError(path, "expected an object {\"builder\": NAME, ...parameters}");
  const auto it = spec.find("builder");
  if (it == spec.end()) throw ConfigError(path + ".builder", "missing required key", "name a topology builder");
  const std::string name = sim::config::read_string(*it, path + ".builder");
  const BuilderInfo& b = BuilderRegistry::instance().get(name, path + ".builder");
  Json params = spec;
  params.erase("builder");
  Topology t = b.build(params, gpus, path);
  t.set_builder(name);
  t.check_connected(path);
  return t;
}

}  // namespace trainsim::topology
