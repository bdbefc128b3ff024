#pragma once
// Topology builders: one file each under builders/, self-registered with a name, a one-line
// description, a closed parameter schema (documented through ParamDoc) and a build function.
// Node builders (one server's internal fabric: nvswitch_node, dgx1_cube_mesh, pcie_tree,
// p2p_full_mesh) register a ServerFabric factory instead; the same fabric then builds a single
// server on its own or every server of a multi-node builder ("intra": {"builder": ...}).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/config/schema.hpp"
#include "sim/registry.hpp"
#include "topology/graph.hpp"
#include "topology/spec.hpp"  // build_topology(), declared there; kept here for older includes

namespace trainsim::topology {

// One documented parameter of a builder (from its sim::config::Schema field table).
struct ParamDoc {
  std::string key, type, fallback;
  bool required = false;
  std::string doc;
};

template <typename T>
std::vector<ParamDoc> param_docs(const sim::config::Schema<T>& schema) {
  std::vector<ParamDoc> out;
  for (const auto& f : schema.fields()) out.push_back(ParamDoc{f.key, f.type, f.fallback, f.required, f.doc});
  return out;
}

// One server's internal fabric, made from a node builder's parameters.
struct ServerFabric {
  int64_t gpus_per_node = 1;
  std::string shape_path;  // the field that sets gpus_per_node (named by shape errors)
  bool in_network_reduction = false;
  // Adds server `server` with GPUs [first_gpu, first_gpu + gpus) (gpus <= gpus_per_node) and
  // its internal switches; returns its GPU vertices in local order.
  std::function<std::vector<Vertex>(Topology& t, int32_t server, int64_t first_gpu, int64_t gpus)> add;
};

using BuildFn = std::function<Topology(const sim::config::Json& params, int64_t gpus, const std::string& path)>;
using ServerFn = std::function<ServerFabric(const sim::config::Json& params, const std::string& path)>;
using ParamDocsFn = std::function<std::vector<ParamDoc>()>;

struct BuilderInfo {
  static constexpr const char* kWhat = "topology builder";  // in errors: unknown topology builder "x"
  std::string name;
  std::string description;
  ParamDocsFn params;
  BuildFn build;
  ServerFn server;  // set for node builders only
  bool is_node_builder() const { return static_cast<bool>(server); }
  // Markdown section: name, description, parameter table.
  std::string markdown() const;
};

// Immutable registry built at start-up from the self-registering files, sorted by name; get()
// throws ConfigError at `path` listing valid builders (with a did-you-mean) when unknown.
using BuilderRegistry = sim::Registry<BuilderInfo>;
// Same as get(), restricted to node builders (for "intra").
const BuilderInfo& get_node_builder(const std::string& name, const std::string& path);
std::vector<std::string> node_builder_names();

// The `build` of a node builder: one server of `fabric` holding `gpus` GPUs; throws ConfigError
// at fabric.shape_path when they do not fit.
Topology build_single_server(const ServerFabric& fabric, int64_t gpus, const std::string& builder);

}  // namespace trainsim::topology

// Registers a builder from its own .cpp: schema_fn returns std::vector<ParamDoc>, build_fn is a BuildFn.
#define TRAINSIM_REGISTER_TOPOLOGY(id, name, description, schema_fn, build_fn)             \
  namespace {                                                                              \
  const ::trainsim::topology::BuilderRegistry::Registrar trainsim_topology_registrar_##id{ \
      ::trainsim::topology::BuilderInfo{name, description, schema_fn, build_fn, nullptr}}; \
  }

// Registers a node builder: server_fn is a ServerFn; its standalone build is one server.
#define TRAINSIM_REGISTER_NODE_TOPOLOGY(id, name, description, schema_fn, server_fn)               \
  namespace {                                                                                      \
  const ::trainsim::topology::BuilderRegistry::Registrar trainsim_topology_registrar_##id{         \
      ::trainsim::topology::BuilderInfo{                                                           \
          name, description, schema_fn,                                                            \
          [](const ::trainsim::sim::config::Json& params, int64_t gpus, const std::string& path) { \
            return ::trainsim::topology::build_single_server(server_fn(params, path), gpus, name); \
          },                                                                                       \
          server_fn}};                                                                             \
  }
