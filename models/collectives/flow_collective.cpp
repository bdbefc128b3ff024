#include "models/collectives/flow_collective.hpp"

#include "models/collectives/flow_executor.hpp"
#include "sim/engine.hpp"
#include "sim/flow/network.hpp"

namespace trainsim::models::collectives {

FlowCollectiveResult run_flow_collective(const topology::Router& router, int32_t gpus, CollectiveOp op,
                                         sim::Bytes bytes, const std::string& algorithm, sim::Time launch) {
  const topology::Topology& t = router.topology();
  std::vector<int32_t> all(static_cast<size_t>(gpus));
  for (int32_t g = 0; g < gpus; ++g) all[static_cast<size_t>(g)] = g;
  const Group group = group_on(t, all);
  const CollectiveSpec spec{op, bytes, 0};
  const auto& registry = AlgorithmRegistry::instance();
  std::string name = algorithm == "auto" ? choose_algorithm(op, bytes, group) : algorithm;
  if (algorithm == "auto" && !registry.get(name, "algorithm").why_not(spec, group, {}).empty()) name = "ring";
  const CollectivePlan plan = registry.get(name, "algorithm").plan(spec, group);
  ExecOptions options;
  if (name != "ring") {
    options.slice_bytes = sim::Bytes(512 * 1024);
    options.max_slices = 64;
  }
  sim::Engine engine;
  sim::flow::FlowNetwork net(engine);
  add_topology_links(t, net);
  FlowExecutor exec(engine, net, router, options);
  sim::Time end;
  exec.run(plan, all, launch, [&] { end = engine.now(); });
  engine.run();
  return {end, name};
}

}  // namespace trainsim::models::collectives
