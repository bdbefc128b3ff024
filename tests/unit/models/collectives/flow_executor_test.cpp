#include "models/collectives/flow_executor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <sstream>
#include <string>

#include "models/collectives/flow_collective.hpp"
#include "sim/engine.hpp"
#include "sim/flow/network.hpp"
#include "topology/graph.hpp"
#include "topology/routing.hpp"
#include "topology/spec.hpp"

namespace trainsim::models::collectives {
namespace {

// Four GPUs on one switch; every cable 100 GB/s per direction and 1 us per link. A GPU-to-GPU
// route is two links (GPU -> switch -> GPU): 2 us of latency, then the bandwidth phase.
topology::Topology star(int n) {
  topology::Topology t;
  const auto sw = t.add_node(topology::NodeKind::kNvSwitch, "sw", 0, 0);
  for (int i = 0; i < n; ++i) {
    const auto g = t.add_node(topology::NodeKind::kGpu, "gpu" + std::to_string(i), 0, i);
    t.add_cable(g, sw, sim::Bandwidth::gbyte_per_s(100), sim::Time::us(1), "nvlink");
  }
  t.set_gpus_per_server(n);
  return t;
}

const AlgorithmInfo& ring() { return AlgorithmRegistry::instance().get("ring", "algo"); }

topology::RoutingParams shortest() {
  topology::RoutingParams p;
  p.mode = topology::RoutingParams::Mode::kShortest;
  return p;
}

struct Fixture {
  topology::Topology topo = star(4);
  topology::Router router{topo, shortest()};
  sim::Engine engine;
  sim::flow::FlowNetwork net{engine};
  FlowExecutor exec{engine, net, router};
  Fixture() { add_topology_links(topo, net); }
};

TEST(FlowExecutor, RingAllReduceStepsRunBackToBack) {
  Fixture f;
  ASSERT_EQ(f.net.link_count(), f.topo.link_count());
  // 4 MB over 4 ranks: 6 steps; in each, every GPU sends one 1 MB chunk to its neighbour, and
  // every directed link carries exactly one flow: 2 us latency + 1 MB / 100 GB/s = 12 us a step.
  // Plus a 5 us launch: 5 + 6 x 12 = 77 us.
  const CollectivePlan plan = ring().plan({CollectiveOp::kAllReduce, sim::Bytes(4'000'000)}, 4);
  sim::Time done = sim::Time::infinite();
  f.exec.run(plan, {0, 1, 2, 3}, sim::Time::us(5), [&] { done = f.engine.now(); });
  f.engine.run();
  EXPECT_EQ(done, sim::Time::us(77));
  // Each GPU's uplink carried 6 chunks: 2(n-1)/n x S.
  for (topology::LinkId l = 0; l < f.topo.link_count(); ++l)
    EXPECT_EQ(f.net.bytes_carried(l), sim::Bytes(6'000'000)) << l;
}

TEST(FlowExecutor, ConcurrentCollectivesShareLinks) {
  Fixture f;
  // Two all-gathers of 4 MB at once on the same GPUs: each link carries two flows that get
  // 50 GB/s each: 3 steps of 2 us + 1 MB / 50 GB/s = 22 us, so both finish at 66 us.
  const CollectivePlan plan = ring().plan({CollectiveOp::kAllGather, sim::Bytes(4'000'000)}, 4);
  std::vector<sim::Time> done;
  for (int i = 0; i < 2; ++i)
    f.exec.run(plan, {0, 1, 2, 3}, sim::Time::zero(), [&] { done.push_back(f.engine.now()); });
  f.engine.run();
  EXPECT_EQ(done, (std::vector<sim::Time>{sim::Time::us(66), sim::Time::us(66)}));
}

TEST(FlowExecutor, CommunicatorMapsGroupRanksToGpus) {
  Fixture f;
  // A 2-rank all-reduce between GPUs 1 and 3: 2 steps of 2 us + 0.5 MB / 100 GB/s = 7 us.
  const CollectivePlan plan = ring().plan({CollectiveOp::kAllReduce, sim::Bytes(1'000'000)}, 2);
  sim::Time done = sim::Time::infinite();
  f.exec.run(plan, {1, 3}, sim::Time::zero(), [&] { done = f.engine.now(); });
  f.engine.run();
  EXPECT_EQ(done, sim::Time::us(14));
  // GPU 0's links stayed idle (link 2i is GPU i -> switch, 2i + 1 the way back).
  EXPECT_EQ(f.net.bytes_carried(0), sim::Bytes(0));
  EXPECT_EQ(f.net.bytes_carried(2), sim::Bytes(1'000'000));
}

TEST(FlowExecutor, AnEmptyPlanFinishesAfterTheLaunch) {
  Fixture f;
  sim::Time done = sim::Time::infinite();
  f.exec.run(CollectivePlan{}, {0}, sim::Time::us(3), [&] { done = f.engine.now(); });
  f.engine.run();
  EXPECT_EQ(done, sim::Time::us(3));
}

TEST(FlowExecutor, StepFusionKeepsAnIdleRingExact) {
  // 8 GPUs on one switch, all-reduce of 8 MB: 14 ring steps of 2 us + 1 MB / 100 GB/s = 12 us.
  // Fused into super-steps of 4 (max_steps 4), each (src, dst) pair sends 4 chunks in one flow
  // that pays 4 latencies: the same 168 us, from 4 x 8 flows instead of 14 x 8.
  const topology::Topology topo = star(8);
  const topology::Router router{topo, shortest()};
  const CollectivePlan plan = ring().plan({CollectiveOp::kAllReduce, sim::Bytes(8'000'000)}, 8);
  for (const int32_t max_steps : {0, 4}) {
    sim::Engine engine;
    sim::flow::FlowNetwork net{engine};
    add_topology_links(topo, net);
    ExecOptions o;
    o.max_steps = max_steps;
    FlowExecutor exec{engine, net, router, o};
    sim::Time done = sim::Time::infinite();
    exec.run(plan, {0, 1, 2, 3, 4, 5, 6, 7}, sim::Time::zero(), [&] { done = engine.now(); });
    engine.run();
    EXPECT_EQ(done, sim::Time::us(168)) << max_steps;
    EXPECT_EQ(exec.stats().flows, max_steps == 0 ? 14u * 8 : 4u * 8) << max_steps;
  }
}

TEST(FlowExecutor, SymmetricCopiesShareTheLinksTheyHaveInCommon) {
  // Two servers of 2 GPUs; each server's GPUs hang off one NIC cable to a shared switch. A
  // send from GPU 0 to GPU 2 stands for itself and its copy 1 -> 3 (offset 1): both cross the
  // two NIC cables, so each gets half of the 50 GB/s: 1 MB takes 40 us after 3 us of latency.
  topology::Topology t;
  const auto fabric = t.add_node(topology::NodeKind::kLeaf, "leaf");
  for (int server = 0; server < 2; ++server) {
    const auto nic = t.add_node(topology::NodeKind::kNic, "nic" + std::to_string(server), server, 0);
    t.add_cable(nic, fabric, sim::Bandwidth::gbyte_per_s(50), sim::Time::us(1), "ib");
    for (int l = 0; l < 2; ++l) {
      const auto g = t.add_node(topology::NodeKind::kGpu, "gpu" + std::to_string(2 * server + l), server, l);
      t.add_cable(g, nic, sim::Bandwidth::gbyte_per_s(1000), sim::Time::ns(500), "pcie");
    }
  }
  t.set_gpus_per_server(2);
  const topology::Router router{t, shortest()};
  const CollectivePlan plan =
      AlgorithmRegistry::instance().get("send_recv", "algo").plan({CollectiveOp::kSendRecv, sim::Bytes(1'000'000)}, 2);
  for (const bool copies : {false, true}) {
    sim::Engine engine;
    sim::flow::FlowNetwork net{engine};
    add_topology_links(t, net);
    FlowExecutor exec{engine, net, router};
    sim::Time done = sim::Time::infinite();
    exec.run(
        plan, {0, 2}, sim::Time::zero(), [&] { done = engine.now(); },
        copies ? std::vector<int32_t>{0, 1} : std::vector<int32_t>{});
    engine.run();
    EXPECT_EQ(done, copies ? sim::Time::us(43) : sim::Time::us(23)) << copies;
  }
}

TEST(FlowExecutor, AWholeTorusGroupCarriesItsDimensions) {
  const topology::Topology t = topology::build_topology(
      sim::config::Json{{"builder", "torus"}, {"shape", {2, 2, 2}}, {"link_bandwidth", "100GBps"}}, 8, "network");
  const Group all = group_on(t, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(all.dims, (std::array<int32_t, 3>{2, 2, 2}));
  EXPECT_EQ(choose_algorithm(CollectiveOp::kAllReduce, sim::Bytes(1 << 20), all), "torus");
  // A part of the torus, or the torus in another order, is an ordinary group.
  EXPECT_EQ(group_on(t, {0, 1, 2, 3}).dims, (std::array<int32_t, 3>{0, 0, 0}));
  EXPECT_EQ(group_on(t, {1, 0, 2, 3, 4, 5, 6, 7}).dims, (std::array<int32_t, 3>{0, 0, 0}));
}

TEST(FlowExecutor, StepFusionNeverChangesAnIdleNetworksTiming) {
  // Fusion runs a plan in super-steps only when every pair sends once in each step of a
  // super-step (a full ring pipeline); trees, broadcast chains and halving-doubling, whose chains
  // pass between different pairs or send several chunks to one peer, run unfused. Either way an
  // idle network gives the unfused time.
  const topology::Topology topo = star(16);
  const topology::Router router{topo, shortest()};
  std::vector<int32_t> gpus(16);
  for (int32_t i = 0; i < 16; ++i) gpus[static_cast<size_t>(i)] = i;
  const auto& reg = AlgorithmRegistry::instance();
  const struct {
    const char* algorithm;
    CollectiveOp op;
  } cases[] = {{"ring", CollectiveOp::kAllReduce},
               {"ring", CollectiveOp::kBroadcast},
               {"ring", CollectiveOp::kReduce},
               {"double_binary_tree", CollectiveOp::kAllReduce},
               {"halving_doubling", CollectiveOp::kAllReduce},
               {"halving_doubling", CollectiveOp::kAllGather},
               {"binomial_tree", CollectiveOp::kBroadcast}};
  for (const auto& c : cases) {
    const CollectivePlan plan = reg.get(c.algorithm, "algo").plan({c.op, sim::Bytes(16'000'000)}, 16);
    sim::Time times[2];
    for (const int32_t max_steps : {0, 2}) {
      sim::Engine engine;
      sim::flow::FlowNetwork net{engine};
      add_topology_links(topo, net);
      ExecOptions o;
      o.max_steps = max_steps;
      FlowExecutor exec{engine, net, router, o};
      exec.run(plan, gpus, sim::Time::zero(), [&] { times[max_steps == 0 ? 0 : 1] = engine.now(); });
      engine.run();
    }
    EXPECT_EQ(times[0], times[1]) << c.algorithm << " " << to_string(c.op);
  }
}

// A rail-optimized fabric of 4 servers x 2 GPUs (rail r = GPU r of every server on rail leaf r),
// 25 GB/s NICs and 250 GB/s NVLink, with GPU 0's NIC cable (both directions) at `factor`.
topology::Topology rails(double factor) {
  topology::Topology t = topology::build_topology(sim::config::Json{{"builder", "rail_optimized"},
                                                                    {"gpus_per_node", 2},
                                                                    {"nvlink_bandwidth", "250GBps"},
                                                                    {"nvlink_latency", "500ns"},
                                                                    {"nic_bandwidth", "25GBps"},
                                                                    {"link_latency", "1us"}},
                                                  8, "network");
  if (factor < 1.0) {
    const auto gpu = topology::node_named(t, "gpu0", "test"), leaf = topology::node_named(t, "rail_leaf0", "test");
    for (topology::LinkId l = 0; l < t.link_count(); ++l)
      if ((t.link_src(l) == gpu && t.link_dst(l) == leaf) || (t.link_src(l) == leaf && t.link_dst(l) == gpu))
        t.degrade(l, factor);
  }
  return t;
}

// One ring collective of 64 MB per rank over the data-parallel group {0, 2, 4, 6} (one GPU per
// server, all on rail 0), run the three ways trainsim runs it: with its copy {1, 3, 5, 7} (rail 1)
// as a symmetric copy (representative fidelity), both groups explicitly (full fidelity), and the
// whole 8 GPUs as NCCL's two ring channels.
enum class Mode { kRepresentative, kFull, kChannels };
sim::Time degraded_ring(CollectiveOp op, double factor, Mode mode) {
  const topology::Topology t = rails(factor);
  const topology::Router router{t, topology::RoutingParams{}};
  const sim::Bytes bytes(64'000'000);
  if (mode == Mode::kChannels) return run_flow_collective(router, 8, op, bytes, "ring", sim::Time::zero()).time;
  const CollectivePlan plan = ring().plan({op, bytes}, Group::blocked(4, 1));
  sim::Engine engine;
  sim::flow::FlowNetwork net{engine};
  add_topology_links(t, net);
  ExecOptions o;
  o.max_steps = 16;
  FlowExecutor exec{engine, net, router, o};
  sim::Time done = sim::Time::zero();
  const auto finished = [&] { done = std::max(done, engine.now()); };
  if (mode == Mode::kRepresentative) {
    exec.run(plan, {0, 2, 4, 6}, sim::Time::zero(), finished, {0, 1});
  } else {
    exec.run(plan, {0, 2, 4, 6}, sim::Time::zero(), finished);
    exec.run(plan, {1, 3, 5, 7}, sim::Time::zero(), finished);
  }
  engine.run();
  return done;
}

TEST(FlowExecutor, ADegradedLinkSlowsARingByAtMostItsFactor) {
  // A ring moves (n - 1)/n x N per rank (twice for an all-reduce) at the pace of its slowest
  // link: GPU 0's NIC at a factor f makes the collective at most 1/f slower (the other links
  // keep up), and slower by some margin since every byte of rail 0's ring crosses it. A
  // connection carries its steps in order: a healthy hop that runs ahead must not make the
  // slow hop share its bandwidth among several steps, which starves the step the next slow hop
  // waits for (that made a quarter-speed link 6x slower).
  for (const CollectiveOp op : {CollectiveOp::kAllGather, CollectiveOp::kReduceScatter, CollectiveOp::kAllReduce})
    for (const Mode mode : {Mode::kRepresentative, Mode::kFull, Mode::kChannels}) {
      const double healthy = degraded_ring(op, 1.0, mode).seconds();
      // Closed form on healthy links (the 25 GB/s NICs are the bottleneck; latency is us).
      const double volume = (op == CollectiveOp::kAllReduce ? 2.0 : 1.0) *
                            (mode == Mode::kChannels ? 7.0 / 8.0 * 64e6 / 2.0 : 3.0 / 4.0 * 64e6);
      std::ostringstream what;
      what << to_string(op) << " mode " << static_cast<int>(mode);
      EXPECT_NEAR(healthy, volume / 25e9, 0.02 * volume / 25e9) << what.str();
      for (const double f : {0.5, 0.25}) {
        const double slow = degraded_ring(op, f, mode).seconds();
        EXPECT_LE(slow, healthy / f * 1.01) << what.str() << " factor " << f;
        EXPECT_GE(slow, healthy * (1.0 + (1.0 / f - 1.0) / 2.0)) << what.str() << " factor " << f;
      }
    }
}

// Two servers of 4 GPUs, each server's GPUs behind one 50 GB/s NIC cable to a shared leaf (NVLink
// 1000 GB/s inside): an all-to-all over all 8, run with every transfer as a flow and as rank 0's
// transfers standing for every rank's (rank rotations 2 x 4) finishes at the same time.
TEST(FlowExecutor, RankRotationsStandForEveryRanksAllToAllTransfers) {
  topology::Topology t;
  const auto fabric = t.add_node(topology::NodeKind::kLeaf, "leaf");
  for (int server = 0; server < 2; ++server) {
    const auto nic = t.add_node(topology::NodeKind::kNic, "nic" + std::to_string(server), server, 0);
    t.add_cable(nic, fabric, sim::Bandwidth::gbyte_per_s(50), sim::Time::us(1), "ib");
    for (int l = 0; l < 4; ++l) {
      const auto g = t.add_node(topology::NodeKind::kGpu, "gpu" + std::to_string(4 * server + l), server, l);
      t.add_cable(g, nic, sim::Bandwidth::gbyte_per_s(1000), sim::Time::ns(500), "nvlink");
    }
  }
  t.set_gpus_per_server(4);
  const topology::Router router{t, shortest()};
  const CollectivePlan full = AlgorithmRegistry::instance()
                                  .get("all_to_all_direct", "algo")
                                  .plan({CollectiveOp::kAllToAll, sim::Bytes(8'000'000)}, 8);
  CollectivePlan rank0 = full;
  for (Step& st : rank0.steps) std::erase_if(st.transfers, [](const Transfer& x) { return x.src != 0; });
  sim::Time done[2];
  for (const bool rotated : {false, true}) {
    sim::Engine engine;
    sim::flow::FlowNetwork net{engine};
    add_topology_links(t, net);
    FlowExecutor exec{engine, net, router};
    done[rotated] = sim::Time::infinite();
    exec.run(
        rotated ? rank0 : full, {0, 1, 2, 3, 4, 5, 6, 7}, sim::Time::zero(), [&] { done[rotated] = engine.now(); }, {},
        1.0, rotated ? RankRotation{2, 4} : RankRotation{});
    engine.run();
    EXPECT_EQ(exec.stats().flows, rotated ? 7u : 56u);
  }
  // Each NIC cable carries 4 x 4 blocks of 1 MB each way: 16 MB at 50 GB/s.
  EXPECT_EQ(done[0], done[1]);
  EXPECT_GE(done[0], sim::Time::us(320));
}

TEST(PlanCache, SharesAPlanBetweenGroupsOfTheSameShape) {
  // Two 16-rank groups on servers {0, 1} and {4, 5}: one plan (group-local ranks); another size
  // or another shape is another plan; NVLS plans name their servers' switches and are not shared.
  PlanCache cache;
  const auto make = [](const CollectiveSpec& spec, const Group& g, const std::string& algo) {
    return [&, algo] { return AlgorithmRegistry::instance().get(algo, "algorithm").plan(spec, g, {}); };
  };
  const auto on = [](std::vector<int32_t> nodes, bool nvls) {
    Group g;
    g.size = static_cast<int32_t>(nodes.size());
    g.node_of_rank = std::move(nodes);
    g.nvls_capable = nvls;
    return g;
  };
  std::vector<int32_t> a(16), b(16);
  for (int32_t r = 0; r < 16; ++r) {
    a[static_cast<size_t>(r)] = r / 8;
    b[static_cast<size_t>(r)] = 4 + r / 8;
  }
  const CollectiveSpec spec{CollectiveOp::kAllReduce, sim::Bytes(1 << 20), 0};
  const Group ga = on(a, true), gb = on(b, true);
  const auto pa = cache.get("ring", spec, {}, ga, make(spec, ga, "ring"));
  const auto pb = cache.get("ring", spec, {}, gb, make(spec, gb, "ring"));
  EXPECT_EQ(pa.get(), pb.get());
  EXPECT_EQ(cache.hits(), 1u);
  const CollectiveSpec other{CollectiveOp::kAllReduce, sim::Bytes(2 << 20), 0};
  EXPECT_NE(cache.get("ring", other, {}, gb, make(other, gb, "ring")).get(), pa.get());
  const auto na = cache.get("nvls", spec, {}, ga, make(spec, ga, "nvls"));
  const auto nb = cache.get("nvls", spec, {}, gb, make(spec, gb, "nvls"));
  EXPECT_NE(na.get(), nb.get());
  EXPECT_TRUE(na->in_network_reduction);
}

}  // namespace
}  // namespace trainsim::models::collectives
