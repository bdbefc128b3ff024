#pragma once
// Topology builders: one file each under builders/, self-registered with a name, a one-line
// description and a closed parameter schema. A network description is a JSON object
// {"builder": NAME, ...parameters}.

#include <functional>
#include <string>
#include <vector>

#include "sim/config/schema.hpp"
#include "topology/graph.hpp"

namespace trainsim::topology {

using BuildFn = std::function<Topology(const sim::config::Json& params, int64_t gpus, const std::string& path)>;

struct BuilderInfo {
  std::string name;
  std::string description;
  BuildFn build;
};

class BuilderRegistry {
 public:
  static const BuilderRegistry& instance();
  // Throws ConfigError at `path` listing valid builders (with a did-you-mean) when unknown.
  const BuilderInfo& get(const std::string& name, const std::string& path) const;
  const std::vector<BuilderInfo>& all() const { return entries_; }

  struct Registrar {
    explicit Registrar(BuilderInfo info);
  };

 private:
  static BuilderRegistry& mutable_instance();
  std::vector<BuilderInfo> entries_;
};

// Builds {"builder": NAME, ...} for `gpus` GPUs and checks that every GPU is reachable.
Topology build_topology(const sim::config::Json& spec, int64_t gpus, const std::string& path);

}  // namespace trainsim::topology

#define TRAINSIM_REGISTER_TOPOLOGY(id, name, description, fn)                              \
  namespace {                                                                              \
  const ::trainsim::topology::BuilderRegistry::Registrar trainsim_topology_registrar_##id{ \
      ::trainsim::topology::BuilderInfo{name, description, fn}};                           \
  }
