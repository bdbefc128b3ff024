#include "topology/spec.hpp"

#include <sstream>

#include "sim/checked.hpp"
#include "sim/config/schema.hpp"
#include "sim/error.hpp"
#include "topology/builder.hpp"
#include "topology/routing.hpp"

namespace trainsim::topology {

using sim::config::Json;

namespace {

struct Fault {
  std::string a, b;
  double factor = 0.0;
  std::string direction = "both";
};

const sim::config::Schema<Fault>& fault_schema() {
  static const sim::config::Schema<Fault> schema = [] {
    sim::config::Schema<Fault> s("fault", "A degraded or failed cable between two named nodes.");
    s.string("a", &Fault::a, std::nullopt, "Name of one end (a node name of the topology, e.g. \"gpu0\").")
        .string("b", &Fault::b, std::nullopt, "Name of the other end.")
        .number("factor", &Fault::factor, 0.0, 1.0, std::nullopt,
                "Capacity multiplier: 0 = failed (traffic reroutes), 0.5 = half capacity; otherwise at least 1e-6.")
        .enumeration("direction", &Fault::direction, {"both", "a_to_b"}, "both",
                     "Which directions of the cable are affected.");
    return s;
  }();
  return schema;
}

void apply_faults(Topology& t, const Json& faults, const std::string& path) {
  if (!faults.is_array())
    throw ConfigError(path, "expected a list of faults, got " + sim::config::json_type_name(faults),
                      "write [{\"a\": NODE, \"b\": NODE, \"factor\": 0}]");
  for (size_t i = 0; i < faults.size(); ++i) {
    std::ostringstream p;
    p << path << "[" << i << "]";
    Fault f;
    fault_schema().parse(faults[i], p.str(), f);
    // Slower than a millionth is a failure (factor 0), and would stretch transfers past the clock.
    if (f.factor > 0.0 && f.factor < sim::kMinSlowdownFactor)
      throw ConfigError(p.str() + ".factor",
                        "must be 0 (a failed cable) or at least 1e-6, got " + sim::config::show(faults[i].at("factor")),
                        "write 0 for a failed cable");
    const Vertex a = node_named(t, f.a, p.str() + ".a"), b = node_named(t, f.b, p.str() + ".b");
    bool found = false;
    for (const Edge e : boost::make_iterator_range(boost::out_edges(a, t.graph()))) {
      if (boost::target(e, t.graph()) != b) continue;
      const LinkId id = t.graph()[e].id;
      t.degrade(id, f.factor);
      if (f.direction == "both") t.degrade(Topology::reverse(id), f.factor);
      found = true;
    }
    if (!found) {
      std::string msg = "no link between \"";
      msg += f.a;
      msg += "\" and \"";
      msg += f.b;
      msg += "\"";
      throw ConfigError(p.str(), msg, "name two nodes joined by a cable");
    }
  }
}

}  // namespace

Topology build_topology(const Json& spec, int64_t gpus, const std::string& path) {
  if (!spec.is_object())
    throw ConfigError(
        path, "expected an object {\"builder\": NAME, ...parameters}, got " + sim::config::json_type_name(spec));
  const auto it = spec.find("builder");
  if (it == spec.end())
    throw ConfigError(path + ".builder", "missing required key",
                      "name a topology builder: " + sim::config::join(BuilderRegistry::instance().names()));
  const std::string name = sim::config::read_string(*it, path + ".builder");
  const BuilderInfo& b = BuilderRegistry::instance().get(name, path + ".builder");
  Json params = spec;
  params.erase("builder");
  params.erase("faults");
  params.erase("routing");
  Topology t = b.build(params, gpus, path);
  t.set_builder(name);
  if (const auto f = spec.find("faults"); f != spec.end()) apply_faults(t, *f, path + ".faults");
  t.check_connected(path);
  (void)routing_params(spec, t, path);  // validated here so that a bad "routing" is never ignored
  return t;
}

RoutingParams routing_params(const Json& spec, const Topology& t, const std::string& path) {
  const auto it = spec.is_object() ? spec.find("routing") : spec.end();
  if (!spec.is_object() || it == spec.end()) return parse_routing(Json::object(), t, path + ".routing");
  return parse_routing(*it, t, path + ".routing");
}

}  // namespace trainsim::topology
