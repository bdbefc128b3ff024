#include "models/collectives/flow_collective.hpp"

#include "models/collectives/flow_executor.hpp"
#include "sim/engine.hpp"
#include "sim/flow/network.hpp"

namespace trainsim::models::collectives {

std::vector<std::vector<int32_t>> ring_channel_orders(CollectiveOp op, const Group& group,
                                                      const std::vector<int32_t>& gpus) {
  const int32_t per_node = group.ranks_per_node();
  std::vector<std::vector<int32_t>> orders;
  const bool rootless =
      op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
  if (!rootless || group.node_count() <= 1 || per_node < 2) return orders;
  const auto by_node = group.ranks_by_node();
  for (int32_t c = 0; c < per_node; ++c) {
    std::vector<int32_t> order;
    for (const auto& ranks : by_node)
      for (int32_t l = 0; l < per_node; ++l)
        order.push_back(gpus[static_cast<size_t>(ranks[static_cast<size_t>((l + c) % per_node)])]);
    orders.push_back(std::move(order));
  }
  return orders;
}

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
  std::vector<std::vector<int32_t>> orders = name == "ring" ? ring_channel_orders(op, group, all) : decltype(orders){};
  const bool channels = !orders.empty();
  const CollectivePlan channel_plan =
      channels ? registry.get(name, "algorithm")
                     .plan(CollectiveSpec{op,
                                          sim::Bytes((bytes.count() + static_cast<int64_t>(orders.size()) - 1) /
                                                     static_cast<int64_t>(orders.size())),
                                          0},
                           group)
               : CollectivePlan{};
  if (!channels) orders.push_back(all);
  sim::Engine engine;
  sim::flow::FlowNetwork net(engine);
  add_topology_links(t, net);
  FlowExecutor exec(engine, net, router, options);
  sim::Time end;
  size_t running = orders.size();
  for (const auto& order : orders)
    exec.run(channels ? channel_plan : plan, order, launch, [&] {
      if (--running == 0) end = engine.now();
    });
  engine.run();
  return {end, channels ? name + " x" + std::to_string(orders.size()) : name};
}

}  // namespace trainsim::models::collectives
