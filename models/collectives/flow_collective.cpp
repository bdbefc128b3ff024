#include "models/collectives/flow_collective.hpp"

#include <algorithm>
#include <cmath>

#include "models/collectives/flow_executor.hpp"
#include "models/collectives/fused_plans.hpp"
#include "sim/engine.hpp"
#include "sim/error.hpp"
#include "sim/flow/network.hpp"

namespace trainsim::models::collectives {

std::vector<std::vector<int32_t>> ring_channel_orders(CollectiveOp op, const Group& group,
                                                      const std::vector<int32_t>& gpus, int32_t count) {
  std::vector<std::vector<int32_t>> orders;
  const bool rootless =
      op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
  const auto by_node = group.ranks_by_node();
  if (!rootless || by_node.size() <= 1) return orders;
  // Servers may hold different numbers of the group's ranks (a job ending on part of an NVL72
  // rack): each rotates its own ranks, and there are as many channels as the smallest one has.
  size_t fewest = by_node.front().size();
  for (const auto& ranks : by_node) fewest = std::min(fewest, ranks.size());
  if (fewest < 2) return orders;
  const auto most = static_cast<int32_t>(fewest);
  const int32_t channels = count > 0 ? std::min(count, most) : most;
  for (int32_t c = 0; c < channels; ++c) {
    std::vector<int32_t> order;
    for (const auto& ranks : by_node)
      for (size_t l = 0; l < ranks.size(); ++l)
        order.push_back(gpus[static_cast<size_t>(ranks[(l + static_cast<size_t>(c)) % ranks.size()])]);
    orders.push_back(std::move(order));
  }
  return orders;
}

namespace {

// NCCL's choice for `spec` on `group`: restricted to the named plan's algorithm, or (auto) the
// fastest whose plan can run the group.
std::optional<NcclChoice> choose_for(const CollectiveSpec& spec, const Group& group, const std::string& algorithm,
                                     const NcclContext& nccl, const NcclSystem& s) {
  const auto& registry = AlgorithmRegistry::instance();
  if (algorithm != "auto") {
    const auto a = nccl_algorithm_of(algorithm, group);
    if (!a) return std::nullopt;
    return nccl_choose(spec.op, spec.bytes, s, nccl.overrides.protocol, a);
  }
  unsigned excluded = 0;
  for (int tries = 0; tries < kNcclAlgorithms; ++tries) {
    auto choice = nccl_choose(spec.op, spec.bytes, s, nccl.overrides.protocol, std::nullopt, excluded);
    if (!choice) return choice;
    const AlgorithmInfo& info = registry.get(plan_algorithm(choice->algorithm), "algorithm");
    if (info.supports(spec.op) && info.why_not(spec, group, {}).empty()) return choice;
    excluded |= 1u << static_cast<int>(choice->algorithm);
  }
  return std::nullopt;
}

// NVLS across servers, one shard of it: the transfers of chunks [0, plan.chunks / g), i.e. every
// rank's shard 0 into its switch, the switch's return to local rank 0, shard 0's all-reduce
// between the servers' rank 0s, and its multicast. Under the rotations inside each server shard
// l is the image of shard 0 (local rank l owns it), so this one shard stands for the whole plan.
CollectivePlan first_shard(const CollectivePlan& plan, int32_t per_node) {
  CollectivePlan out = plan;
  const int32_t keep = plan.chunks / per_node;
  for (Step& st : out.steps) std::erase_if(st.transfers, [keep](const Transfer& t) { return t.chunk >= keep; });
  std::erase_if(out.steps, [](const Step& st) { return st.transfers.empty(); });
  derive_dependencies(out);
  return out;
}

// The channels of a ring share a GPU's NVLink (each sends one transfer of b bytes per step) but
// drift apart, each idle for its step latency L between transfers: at a link of capacity c the
// ones transmitting at once settle at C_eff = C - L c / b (tx = b C_eff / c, duty tx / (tx + L)),
// from 1 when latency dominates to C when bytes do. Checked against every channel's flows:
// NcclTuning.FastModeRingsAgreeWithEveryChannel (DGX A100) and RingsAcrossNvl72RacksAreBoundByNvlink.
double ring_overlap(const ChannelPlan& cp, sim::Bytes bytes, int32_t ranks, const hardware::ClusterSpec& c) {
  const auto channels = static_cast<double>(cp.orders.size());
  if (channels <= 1.0 || ranks <= 1) return 1.0;
  const double b = static_cast<double>(bytes.count()) / channels / ranks * cp.cost.wire_factor;
  const double cap = c.nvlink_bandwidth.bytes_per_second() * c.nvlink_efficiency;
  const double effective = std::clamp(channels - cp.cost.step_intra.seconds() * cap / std::max(b, 1.0), 1.0, channels);
  return (effective - 1.0) / (channels - 1.0);
}

}  // namespace

std::string ChannelPlan::label() const {
  std::string out = algorithm;
  if (orders.size() > 1) out += " x" + std::to_string(orders.size());
  if (!nccl) return out;
  std::string head = to_string(nccl->algorithm);
  head += "/";
  head += to_string(nccl->protocol);
  head += " x" + std::to_string(nccl->channels);
  return head + " (" + out + ")";
}

ChannelPlan plan_channels(const CollectiveSpec& spec, const Group& group, const std::vector<int32_t>& gpus,
                          const std::string& algorithm, const NcclContext& nccl, PlanCache* cache,
                          int32_t fused_steps) {
  const auto& registry = AlgorithmRegistry::instance();
  const AlgorithmInfo* chosen = nullptr;
  ChannelPlan out;
  std::optional<NcclSystem> system;
  if (nccl.cluster != nullptr && group.size > 1) {
    const int32_t per_node = group.ranks_per_node() > 0 ? group.ranks_per_node()
                                                        : (group.size + group.node_count() - 1) / group.node_count();
    system = nccl_system(*nccl.cluster, group.size, per_node, group.nvls_capable, nccl.overrides.channels);
    out.nccl = choose_for(spec, group, algorithm, nccl, *system);
    if (out.nccl && algorithm == "auto") chosen = &registry.get(plan_algorithm(out.nccl->algorithm), "algorithm");
  }
  if (chosen == nullptr && algorithm != "auto") {
    chosen = &registry.get(algorithm, "algorithm");
  } else if (chosen == nullptr) {
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
  out.algorithm = chosen->name;
  if (out.nccl) {
    out.cost = transfer_cost(*out.nccl, spec.op, *system, *nccl.cluster, group);
    out.base = sim::Time::from_seconds_ceil(
        nccl_steps(spec.op, out.nccl->algorithm, out.nccl->protocol, *system).base_us * 1e-6);
  }
  AlgorithmParams params;
  // NVLS across servers runs NCCL's NVLS-tree: a tree between the servers' switches.
  if (out.nccl && out.nccl->algorithm == NcclAlgorithm::kNvlsTree &&
      detail::cross_node_check(group, "double_binary_tree", true).empty())
    params.inter_node = "double_binary_tree";
  // Rings and node-level trees run one channel per GPU of a server, each entering and leaving
  // the servers through different GPUs (and so NICs), as NCCL's channels do.
  // NCCL runs its graph's channels (16 across NVL72 racks, not 72): as many as use distinct
  // GPUs' NIC shares (a GPU owning half a NIC counts half a channel).
  if (chosen->name == "ring" || chosen->name == "double_binary_tree") {
    int32_t count = 0;
    if (system && nccl.overrides.channels == 0)
      count = static_cast<int32_t>(std::ceil(system->channels / std::max(1e-9, nccl.cluster->nic_share())));
    out.orders = ring_channel_orders(spec.op, group, gpus, count);
  }
  CollectiveSpec one = spec;  // one channel's share
  if (out.orders.empty()) {
    out.orders.push_back(gpus);
  } else {
    const auto channels = static_cast<int64_t>(out.orders.size());
    one.bytes = sim::Bytes((spec.bytes.count() + channels - 1) / channels);
    params = {};
  }
  const bool rootless = spec.op == CollectiveOp::kAllReduce || spec.op == CollectiveOp::kAllGather ||
                        spec.op == CollectiveOp::kReduceScatter;
  if (fused_steps > 0 && chosen->name == "ring" && rootless && !params.bidirectional &&
      (spec.op == CollectiveOp::kAllReduce ? 2 : 1) * (group.size - 1) > fused_steps) {
    out.plan = std::make_shared<const CollectivePlan>(fused_ring(spec.op, one.bytes, group.size, fused_steps));
    return out;
  }
  if (fused_steps > 0 && chosen->name == "hierarchical" && params.inter_node == "ring" && group.ranks_per_node() > 0 &&
      group.node_count() > 1) {
    out.plan = std::make_shared<const CollectivePlan>(hierarchical_representative(one, group));
    out.representative = true;
    return out;
  }
  const auto make = [&] { return chosen->plan(one, group, params); };
  out.plan = cache != nullptr ? cache->get(chosen->name, one, params, group, make)
                              : std::make_shared<const CollectivePlan>(make());
  return out;
}

FlowCollectiveResult run_flow_collective(const topology::Router& router, int32_t gpus, CollectiveOp op,
                                         sim::Bytes bytes, const std::string& algorithm, sim::Time launch,
                                         const NcclContext& nccl, bool full) {
  // Super-steps of the fast mode's fused plans (the simulation's NetworkCommRunner::kMaxSteps).
  constexpr int32_t kFusedSteps = 16;
  const topology::Topology& t = router.topology();
  std::vector<int32_t> all(static_cast<size_t>(gpus));
  for (int32_t g = 0; g < gpus; ++g) all[static_cast<size_t>(g)] = g;
  const Group group = group_on(t, all);
  const ChannelPlan cp =
      plan_channels(CollectiveSpec{op, bytes, 0}, group, all, algorithm, nccl, nullptr, full ? 0 : kFusedSteps);
  ExecOptions options;
  if (cp.algorithm != "ring") {
    options.slice_bytes = sim::Bytes(kSimpleSliceBytes);
    options.max_slices = kMaxPipelineSlices;
  }
  sim::Engine engine;
  sim::flow::FlowNetwork net(engine);
  add_topology_links(t, net);
  FlowExecutor exec(engine, net, router, options);
  sim::Time end;
  // Rings: checked against every channel within 13% (docs/network.md). Trees and hierarchical
  // under orbit constraints: equal to every flow (FastMode tests). NVLS across servers: shard 0
  // stands for every shard (first_shard), its switch hops counted per step (switch_usage).
  // Shard l of NVLS-tree is the image of shard 0 under the rotation by l inside every server, also
  // when servers hold different numbers of ranks (g, the fewest, own shards; FlowExecutor::Copies).
  const int32_t g = detail::fewest_per_node(group);
  const bool ring = cp.algorithm == "ring" && cp.orders.size() > 1;
  const bool nvls = cp.algorithm == "nvls" && group.node_count() > 1 && g >= 2 && cp.plan->chunks % g == 0;
  const bool tree = cp.algorithm == "double_binary_tree" && cp.orders.size() > 1;
  const bool symmetric = !full && (ring || nvls || tree || cp.representative);
  size_t running = symmetric ? 1 : cp.orders.size();
  const auto done = [&] {
    if (--running == 0) end = engine.now();
  };
  const auto channels = static_cast<int32_t>(cp.orders.size());
  RankRotation local{group.node_count(), nvls ? g : channels, true, nvls ? g : channels};
  if (cp.representative) {
    // Hierarchical: server 0's shard 0 stands for every server and shard; its phases run one
    // after another, pipelined, which orbit constraints follow (FlowExecutor).
    local = RankRotation{group.node_count(), g};
    local.orbits = true;
  }
  // Trees: channel 0 stands for every channel; the two trees cross each other's heads and their
  // chains run up and down at once, which orbit constraints follow where counted images did not.
  local.orbits = local.orbits || tree;
  if (ring && nccl.cluster != nullptr) local.overlap = ring_overlap(cp, bytes, gpus, *nccl.cluster);
  CollectivePlan shard;
  if (symmetric && nvls) {
    shard = first_shard(*cp.plan, g);
    exec.run(shard, cp.orders[0], launch + cp.base, done, {}, 1.0, local, cp.cost);
  } else if (symmetric) {
    exec.run(*cp.plan, cp.orders[0], launch + cp.base, done, {}, 1.0, local, cp.cost);
  } else {
    for (const auto& order : cp.orders) exec.run(*cp.plan, order, launch + cp.base, done, {}, 1.0, {}, cp.cost);
  }
  engine.run();
  return {end, cp.label()};
}

}  // namespace trainsim::models::collectives
