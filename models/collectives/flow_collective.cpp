#include "models/collectives/flow_collective.hpp"

#include "models/collectives/flow_executor.hpp"
#include "sim/engine.hpp"
#include "sim/error.hpp"
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

ChannelPlan plan_channels(const CollectiveSpec& spec, const Group& group, const std::vector<int32_t>& gpus,
                          const std::string& algorithm) {
  const auto& registry = AlgorithmRegistry::instance();
  const AlgorithmInfo* chosen = nullptr;
  if (algorithm != "auto") {
    chosen = &registry.get(algorithm, "algorithm");
  } else {
    for (const std::string& name : {choose_algorithm(spec.op, spec.bytes, group), std::string("ring"),
                                    std::string("all_to_all_direct"), std::string("send_recv")}) {
      const AlgorithmInfo& a = registry.get(name, "algorithm");
      if (a.supports(spec.op) && a.why_not(spec, group, {}).empty()) {
        chosen = &a;
        break;
      }
    }
    TRAINSIM_ASSERT(chosen != nullptr, "no collective algorithm runs ", to_string(spec.op), " on ", gpus.size(),
                    " GPUs");
  }
  ChannelPlan out;
  out.algorithm = chosen->name;
  if (chosen->name == "ring") out.orders = ring_channel_orders(spec.op, group, gpus);
  if (out.orders.empty()) {
    out.orders.push_back(gpus);
    out.plan = chosen->plan(spec, group);
  } else {
    const auto channels = static_cast<int64_t>(out.orders.size());
    out.plan = chosen->plan(
        CollectiveSpec{spec.op, sim::Bytes((spec.bytes.count() + channels - 1) / channels), spec.root}, group);
  }
  return out;
}

FlowCollectiveResult run_flow_collective(const topology::Router& router, int32_t gpus, CollectiveOp op,
                                         sim::Bytes bytes, const std::string& algorithm, sim::Time launch) {
  const topology::Topology& t = router.topology();
  std::vector<int32_t> all(static_cast<size_t>(gpus));
  for (int32_t g = 0; g < gpus; ++g) all[static_cast<size_t>(g)] = g;
  const ChannelPlan cp = plan_channels(CollectiveSpec{op, bytes, 0}, group_on(t, all), all, algorithm);
  ExecOptions options;
  if (cp.algorithm != "ring") {
    // NCCL's Simple protocol moves a 4 MiB buffer (NCCL_BUFFSIZE default) in NCCL_STEPS = 8 slots:
    // 512 KiB per pipeline step (NCCL src/include/device.h, docs "Environment Variables").
    options.slice_bytes = sim::Bytes(512 * 1024);
    options.max_slices = 64;
  }
  sim::Engine engine;
  sim::flow::FlowNetwork net(engine);
  add_topology_links(t, net);
  FlowExecutor exec(engine, net, router, options);
  sim::Time end;
  size_t running = cp.orders.size();
  for (const auto& order : cp.orders)
    exec.run(cp.plan, order, launch, [&] {
      if (--running == 0) end = engine.now();
    });
  engine.run();
  return {end, cp.orders.size() > 1 ? cp.algorithm + " x" + std::to_string(cp.orders.size()) : cp.algorithm};
}

}  // namespace trainsim::models::collectives
