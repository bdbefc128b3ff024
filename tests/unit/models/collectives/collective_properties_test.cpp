// Properties every collective must have, on random clusters, groups and sizes (fixed seeds, so the
// same cases run every time), drawn from bugs users reported in peer simulators: time that fell
// as a message grew, an in-switch reduction offered to a group outside the switch's reach, a
// topology change that did not change a collective crossing it, crashes on uneven groups and on
// hand-written topologies.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "../test_support.hpp"
#include "models/collectives/alpha_beta.hpp"
#include "models/collectives/flow_collective.hpp"
#include "models/collectives/flow_executor.hpp"
#include "models/collectives/sweep.hpp"
#include "sim/engine.hpp"
#include "sim/flow/network.hpp"
#include "topology/builder.hpp"
#include "topology/routing.hpp"
#include "topology/spec.hpp"

namespace trainsim::models::collectives {
namespace {

// A random subset of `count` of GPUs 0..total-1, in random order.
std::vector<int32_t> random_group(std::mt19937& rng, int32_t total, int32_t count) {
  std::vector<int32_t> all(static_cast<size_t>(total));
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(static_cast<size_t>(count));
  return all;
}

// One collective of `bytes` over `gpus` (any order, any placement) on the flow network, every flow.
sim::Time run_group(const topology::Router& router, const hardware::ClusterSpec& c, const std::vector<int32_t>& gpus,
                    CollectiveOp op, sim::Bytes bytes) {
  const Group group = group_on(router.topology(), gpus);
  const ChannelPlan cp = plan_channels(CollectiveSpec{op, bytes, 0}, group, gpus, "auto", NcclContext{&c, {}});
  sim::Engine engine;
  sim::flow::FlowNetwork net(engine);
  add_topology_links(router.topology(), net);
  ExecOptions options;
  options.slice_bytes = sim::Bytes(512 * 1024);
  FlowExecutor exec(engine, net, router, options);
  size_t running = cp.orders.size();
  sim::Time end = sim::Time::infinite();
  for (const auto& order : cp.orders)
    exec.run(
        *cp.plan, order, c.collective_launch + cp.base,
        [&] {
          if (--running == 0) end = engine.now();
        },
        {}, 1.0, {}, cp.cost);
  engine.run();
  return end;
}

TEST(CollectiveProperties, TimeNeverFallsAsTheMessageGrows) {
  std::mt19937 rng(20261128);
  const std::vector<const char*> presets = {"dgx-a100", "dgx-h100", "dgx-b200", "gb200-nvl72"};
  const std::vector<int64_t> counts = {2, 4, 8, 16, 24, 32, 64, 128};
  const std::vector<CollectiveOp> ops = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather,
                                         CollectiveOp::kReduceScatter};
  std::vector<sim::Bytes> sizes;
  for (int64_t b = 1024; b <= (int64_t{1} << 30); b *= 4) sizes.push_back(sim::Bytes(b));
  for (int trial = 0; trial < 10; ++trial) {
    const char* preset = presets[rng() % presets.size()];
    const int64_t gpus = counts[rng() % counts.size()];
    const CollectiveOp op = ops[rng() % ops.size()];
    const auto c = testing::cluster(preset);
    for (const bool flow : {false, true}) {
      const Sweep s = flow ? flow_sweep(c, gpus, op, sizes, "auto") : analytic_sweep(c, gpus, op, sizes, "auto");
      for (size_t i = 1; i < s.points.size(); ++i)
        EXPECT_GE(s.points[i].time, s.points[i - 1].time)
            << preset << ", " << gpus << " GPUs, " << to_string(op) << (flow ? ", flow: " : ", analytic: ")
            << s.points[i - 1].algorithm << " at " << sizes[i - 1].count() << " bytes, " << s.points[i].algorithm
            << " at " << sizes[i].count();
    }
  }
}

TEST(CollectiveProperties, NvlsNeverServesAGroupThatLeavesItsNvlinkDomain) {
  // Random groups, in random order, on DGX H100 servers and NVL72 racks: NCCL's NVLS (the switch
  // reduction of one domain) only for groups inside one domain; across domains NVLS-tree at most.
  std::mt19937 rng(7);
  for (const char* preset : {"dgx-h100", "gb200-nvl72"}) {
    const auto c = testing::cluster(preset);
    const int64_t total = 4 * c.domain_gpus();
    const auto spec = hardware::network_spec(c);
    const topology::Topology t = topology::build_topology(spec, total, "cluster.network");
    for (int trial = 0; trial < 40; ++trial) {
      const auto gpus = random_group(rng, static_cast<int32_t>(total), 2 + static_cast<int32_t>(rng() % 80));
      const Group group = group_on(t, gpus);
      for (const int64_t b : {int64_t{1} << 16, int64_t{64} << 20, int64_t{1} << 30}) {
        const ChannelPlan cp =
            plan_channels(CollectiveSpec{CollectiveOp::kAllReduce, sim::Bytes(b), 0}, group, gpus, "auto", {&c, {}});
        if (group.node_count() > 1 && cp.nccl) {
          EXPECT_NE(cp.nccl->algorithm, NcclAlgorithm::kNvls)
              << preset << ": " << gpus.size() << " GPUs on " << group.node_count() << " domains, " << cp.label();
        }
      }
    }
  }
}

TEST(CollectiveProperties, ALinksBandwidthChangesACollectiveThatCrossesIt) {
  // Halving the NICs slows an all-reduce across servers, halving NVLink one inside a server, on
  // both networks; a collective inside one server does not see the NICs.
  const auto base = testing::cluster("dgx-h100");
  auto slow_nic = base, slow_nvlink = base;
  slow_nic.nic_bandwidth = base.nic_bandwidth * 0.5;
  slow_nvlink.nvlink_bandwidth = base.nvlink_bandwidth * 0.5;
  const std::vector<sim::Bytes> sizes = {sim::Bytes(int64_t{1} << 30)};
  for (const bool flow : {false, true}) {
    const auto time = [&](const hardware::ClusterSpec& c, int64_t gpus) {
      const Sweep s = flow ? flow_sweep(c, gpus, CollectiveOp::kAllReduce, sizes, "ring")
                           : analytic_sweep(c, gpus, CollectiveOp::kAllReduce, sizes, "ring");
      return s.points.front().time.seconds();
    };
    EXPECT_GT(time(slow_nic, 32), 1.2 * time(base, 32)) << (flow ? "flow" : "analytic");
    EXPECT_GT(time(slow_nvlink, 8), 1.2 * time(base, 8)) << (flow ? "flow" : "analytic");
    EXPECT_EQ(time(slow_nic, 8), time(base, 8)) << (flow ? "flow" : "analytic");
  }
}

TEST(CollectiveProperties, UnevenGroupsRunOnEveryAlgorithmWithoutACrash) {
  // Random groups, in random order and uneven over servers, every op NCCL's choice covers and
  // the all-to-all: each finishes, after its launch, no earlier than its bytes could cross.
  std::mt19937 rng(35);
  const auto c = testing::cluster("dgx-h100");
  const auto spec = hardware::network_spec(c);
  const topology::Topology t = topology::build_topology(spec, 64, "cluster.network");
  const topology::Router router(t, topology::routing_params(spec, t, "cluster.network"));
  const std::vector<CollectiveOp> ops = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather,
                                         CollectiveOp::kReduceScatter, CollectiveOp::kBroadcast,
                                         CollectiveOp::kAllToAll};
  for (int trial = 0; trial < 24; ++trial) {
    const auto gpus = random_group(rng, 64, 2 + static_cast<int32_t>(rng() % 30));
    const CollectiveOp op = ops[rng() % ops.size()];
    const sim::Bytes bytes(int64_t{1} << (10 + rng() % 18));
    const sim::Time end = run_group(router, c, gpus, op, bytes);
    EXPECT_FALSE(end.is_infinite()) << to_string(op) << " over " << gpus.size() << " GPUs";
    EXPECT_GT(end, c.collective_launch) << to_string(op) << " over " << gpus.size() << " GPUs";
  }
}

TEST(CollectiveProperties, AHandWrittenTopologyRunsEveryGroup) {
  // An explicit topology (two servers of 3 GPUs on a switch each, one leaf between them): every
  // group of 2 to 6 of its GPUs, in random order, all-reduces and all-to-alls to the end.
  using sim::config::Json;
  const auto node = [](const std::string& name, const char* kind, int server) {
    return Json{{"name", name}, {"kind", kind}, {"server", server}};
  };
  const auto link = [](const std::string& a, const std::string& b, const char* bw) {
    return Json{{"a", a}, {"b", b}, {"bandwidth", bw}, {"latency", "2us"}};
  };
  Json spec{{"builder", "explicit"}};
  spec["nodes"] = Json::array();
  spec["links"] = Json::array();
  for (int s = 0; s < 2; ++s) {
    spec["nodes"].push_back(node("sw" + std::to_string(s), "nvswitch", s));
    for (int g = 0; g < 3; ++g) {
      const std::string name = "g" + std::to_string(3 * s + g);
      spec["nodes"].push_back(node(name, "gpu", s));
      spec["links"].push_back(link(name, "sw" + std::to_string(s), "300GBps"));
    }
    spec["links"].push_back(link("sw" + std::to_string(s), "leaf", "50GBps"));
  }
  spec["nodes"].push_back(Json{{"name", "leaf"}, {"kind", "leaf"}, {"server", nullptr}});
  const topology::Topology t = topology::build_topology(spec, 6, "cluster.network");
  const topology::Router router(t, topology::routing_params(spec, t, "cluster.network"));
  const auto c = testing::cluster("dgx-h100");
  std::mt19937 rng(6);
  for (int trial = 0; trial < 20; ++trial) {
    const auto gpus = random_group(rng, 6, 2 + static_cast<int32_t>(rng() % 5));
    for (const CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllToAll}) {
      const sim::Time end = run_group(router, c, gpus, op, sim::Bytes(int64_t{1} << (12 + rng() % 16)));
      EXPECT_FALSE(end.is_infinite()) << to_string(op) << " over " << gpus.size() << " GPUs";
    }
  }
}

}  // namespace
}  // namespace trainsim::models::collectives
