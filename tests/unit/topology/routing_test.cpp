// Router (topology/routing.cpp): ECMP, spray, dimension order, shortest; failures; scale.
#include "topology/routing.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <set>

#include "test_support.hpp"

namespace trainsim::topology {
namespace {

using testing::build;
using testing::Json;

Json rail(int64_t servers_per_unit = 4, int64_t spines = 2) {
  return Json{{"builder", "rail_optimized"},          {"gpus_per_node", 8},
              {"nvlink_bandwidth", "450GBps"},        {"nic_bandwidth", "50GBps"},
              {"servers_per_unit", servers_per_unit}, {"spines", spines}};
}

RoutingParams params(RoutingParams::Mode mode, int32_t flows = 1, uint64_t seed = 0) {
  RoutingParams p;
  p.mode = mode;
  p.flows_per_connection = flows;
  p.seed = seed;
  return p;
}

void expect_chained(const Topology& t, const Route& r, uint32_t src, uint32_t dst) {
  ASSERT_FALSE(r.links.empty());
  EXPECT_EQ(t.link_src(r.links.front()), t.gpu_node(src));
  EXPECT_EQ(t.link_dst(r.links.back()), t.gpu_node(dst));
  for (size_t k = 1; k < r.links.size(); ++k) EXPECT_EQ(t.link_dst(r.links[k - 1]), t.link_src(r.links[k]));
}

double total_fraction(const std::vector<Route>& routes) {
  return std::accumulate(routes.begin(), routes.end(), 0.0, [](double a, const Route& r) { return a + r.fraction; });
}

TEST(Routing, RailOptimizedHopCounts) {
  const Topology t = build(rail(), 64);
  const Router r(t, RoutingParams{});
  EXPECT_EQ(r.hops(0, 0), 0);
  EXPECT_EQ(r.hops(0, 1), 2);   // same server: GPU - NVSwitch - GPU
  EXPECT_EQ(r.hops(0, 8), 2);   // GPU 0 of servers 0 and 1: the same rail leaf
  EXPECT_EQ(r.hops(0, 40), 4);  // other scalable unit, same rail: leaf - spine - leaf
  // Other server, other rail: NVLink to the destination's rail then the rail (PXN), either end;
  // the spine path costs more (4 fabric links against 2).
  EXPECT_EQ(r.hops(0, 9), 4);
  EXPECT_DOUBLE_EQ(r.path_count(0, 9), 2.0);
  for (const Route& route : r.routes(0, 9, 7)) {
    expect_chained(t, route, 0, 9);
    size_t nvlink = 0;
    for (const LinkId l : route.links) nvlink += t.link(l).kind == "nvlink";
    EXPECT_EQ(nvlink, 2u);
  }
}

TEST(Routing, IntraServerTrafficStaysOnNvlink) {
  // In a plain fat tree every GPU of a server hangs off the same leaf: GPU - leaf - GPU is as
  // many hops as GPU - NVSwitch - GPU, but fabric links cost more, so only NVLink is used.
  const Json j{{"builder", "fat_tree"}, {"nvlink_bandwidth", "450GBps"}, {"nic_bandwidth", "50GBps"}, {"radix", 64}};
  const Topology t = build(j, 64);
  const Router r(t, RoutingParams{});
  EXPECT_DOUBLE_EQ(r.path_count(0, 5), 1.0);
  const auto routes = r.routes(0, 5, 0);
  for (const LinkId l : routes[0].links) EXPECT_EQ(t.link(l).kind, "nvlink");
}

TEST(Routing, EcmpIsDeterministicAndSpreadsSubFlows) {
  const Topology t = build(rail(4, 8), 64);
  const Router r(t, params(RoutingParams::Mode::kEcmp, 16, 42)), again(t, params(RoutingParams::Mode::kEcmp, 16, 42));
  const auto a = r.routes(0, 40, 1), b = again.routes(0, 40, 1);
  ASSERT_EQ(a.size(), 16u);
  std::set<LinkId> spines;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].links, b[i].links);
    EXPECT_DOUBLE_EQ(a[i].fraction, 1.0 / 16);
    expect_chained(t, a[i], 0, 40);
    spines.insert(a[i].links[1]);  // the leaf -> spine choice
  }
  EXPECT_NEAR(total_fraction(a), 1.0, 1e-12);
  // 16 sub-flows hashed over 8 spines: 8 (1 - (7/8)^16) = 7.1 distinct spines expected.
  EXPECT_GE(spines.size(), 5u);
  // Another connection (flow id) or seed hashes differently, but stays on equal-cost paths.
  const Router other(t, params(RoutingParams::Mode::kEcmp, 16, 43));
  const auto c = other.routes(0, 40, 1);
  size_t same = 0;
  for (size_t i = 0; i < c.size(); ++i) same += c[i].links == a[i].links;
  EXPECT_LT(same, 16u);
  for (const Route& route : c) EXPECT_EQ(route.links.size(), 4u);
}

// Paths found ahead of use, on several threads, are the ones found on demand: every mode's
// routes between every pair of a 256-GPU fabric are the same with and without prefetch (PXN's
// legs included: pairs on other servers and rails).
TEST(Routing, PrefetchedPathsAreThePathsFoundOnDemand) {
  const Topology t = build(rail(4, 8), 256);
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (uint32_t s = 0; s < 256; s += 3)
    for (uint32_t d = 0; d < 256; d += 5) pairs.emplace_back(s, d);
  for (const auto mode : {RoutingParams::Mode::kEcmp, RoutingParams::Mode::kSpray, RoutingParams::Mode::kShortest}) {
    const Router lazy(t, params(mode, 4, 7)), early(t, params(mode, 4, 7)), alone(t, params(mode, 4, 7));
    early.prefetch(pairs, 4);
    alone.prefetch(pairs, 1);
    for (const auto& [s, d] : pairs) {
      const auto want = lazy.routes(s, d, s * 256 + d);
      for (const Router* r : {&early, &alone}) {
        const auto got = r->routes(s, d, s * 256 + d);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT_EQ(got[i].links, want[i].links);
          EXPECT_DOUBLE_EQ(got[i].fraction, want[i].fraction);
        }
      }
    }
  }
}

TEST(Routing, SinglePathModesRepeatTheirRoute) {
  const Topology t = build(rail(4, 8), 64);
  const Router r(t, params(RoutingParams::Mode::kShortest, 4));
  const auto routes = r.routes(0, 40, 99);
  ASSERT_EQ(routes.size(), 4u);
  for (const Route& route : routes) {
    EXPECT_EQ(route.links, routes[0].links);
    EXPECT_DOUBLE_EQ(route.fraction, 0.25);
  }
  // The lowest link ids: the first spine.
  EXPECT_EQ(t.node(t.link_dst(routes[0].links[1])).name, "spine0");
  std::vector<Route> appended(1);
  r.routes(0, 40, 99, appended);  // the out-parameter form appends
  EXPECT_EQ(appended.size(), 5u);
  EXPECT_TRUE(r.routes(3, 3, 0).empty());
}

TEST(Routing, SprayCoversEveryEqualCostPath) {
  const Topology t = build(rail(4, 4), 64);
  const Router r(t, params(RoutingParams::Mode::kSpray));
  const auto routes = r.routes(0, 40, 0);  // same rail, different units: one path per spine
  ASSERT_EQ(routes.size(), 4u);
  std::set<std::vector<LinkId>> distinct;
  for (const Route& route : routes) {
    EXPECT_DOUBLE_EQ(route.fraction, 0.25);
    expect_chained(t, route, 0, 40);
    distinct.insert(route.links);
  }
  EXPECT_EQ(distinct.size(), 4u);
  // Other unit, other rail: GPU - leaf - spine - leaf - GPU costs 4 x 2 = 8 over each of the 4
  // spines; the NVLink detours (NVLink first or last) cost 10, so only the 4 spine paths count.
  EXPECT_DOUBLE_EQ(r.path_count(0, 41), 4.0);
  EXPECT_NEAR(total_fraction(r.routes(0, 41, 0)), 1.0, 1e-12);
}

TEST(Routing, SprayBeyondTheCapSamplesUniformly) {
  // 4x4x4 torus, GPU 0 to (2, 2, 2): 6 hops, 6! / (2! 2! 2!) = 90 orders x 2^3 directions
  // (each offset of 2 can go either way round a ring of 4) = 720 paths.
  const Json j{{"builder", "torus"}, {"shape", {4, 4, 4}}, {"link_bandwidth", "50GBps"}};
  const Topology t = build(j, 64);
  RoutingParams p = params(RoutingParams::Mode::kSpray);
  p.max_spray_paths = 32;
  const Router r(t, p);
  const uint32_t dst = 2 + 4 * 2 + 16 * 2;
  EXPECT_DOUBLE_EQ(r.path_count(0, dst), 720.0);
  const auto routes = r.routes(0, dst, 0);
  EXPECT_LE(routes.size(), 32u);
  EXPECT_GE(routes.size(), 25u);  // 32 draws from 720 paths rarely collide
  EXPECT_NEAR(total_fraction(routes), 1.0, 1e-12);
  for (const Route& route : routes) {
    EXPECT_EQ(route.links.size(), 6u);
    expect_chained(t, route, 0, dst);
  }
  EXPECT_EQ(r.routes(0, dst, 5)[0].links, routes[0].links);  // the same split for every flow
}

TEST(Routing, DimensionOrderOnATorus) {
  // 4x4x4: GPU (x, y, z) = x + 4 y + 16 z. From (0,0,0) to (3,2,1): x goes -1 (the short way
  // round), y +2 (a tie: the + direction), z +1; 4 hops in dimension order x, y, z.
  const Json j{{"builder", "torus"}, {"shape", {4, 4, 4}}, {"link_bandwidth", "50GBps"}};
  const Topology t = build(j, 64);
  const Router r(t, params(RoutingParams::Mode::kDimensionOrder, 2));
  const uint32_t dst = 3 + 4 * 2 + 16 * 1;
  const auto routes = r.routes(0, dst, 0);
  ASSERT_EQ(routes.size(), 2u);
  EXPECT_EQ(routes[0].links, routes[1].links);
  const std::vector<std::string> expected{"gpu3", "gpu7", "gpu11", "gpu27"};
  ASSERT_EQ(routes[0].links.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) EXPECT_EQ(t.node(t.link_dst(routes[0].links[k])).name, expected[k]);
  // Route lengths equal the torus distance sum_k min(d_k, n_k - d_k) for every pair.
  for (uint32_t s = 0; s < 64; s += 7)
    for (uint32_t d = 0; d < 64; ++d) {
      int32_t expect = 0;
      for (uint32_t k = 0, a = s, b = d; k < 3; ++k, a /= 4, b /= 4) {
        const int32_t diff = static_cast<int32_t>((b % 4 + 4 - a % 4) % 4);
        expect += std::min(diff, 4 - diff);
      }
      std::vector<Route> out;
      r.routes(s, d, 0, out);
      EXPECT_EQ(out.empty() ? 0 : static_cast<int32_t>(out[0].links.size()), expect);
    }
}

TEST(Routing, DimensionOrderFallsBackAroundFailedLinks) {
  Json j{{"builder", "torus"}, {"shape", {4, 4}}, {"link_bandwidth", "50GBps"}};
  j["faults"] = Json::array({Json{{"a", "gpu0"}, {"b", "gpu1"}, {"factor", 0}}});
  const Topology t = build(j, 16);
  const Router r(t, params(RoutingParams::Mode::kDimensionOrder));
  const auto routes = r.routes(0, 1, 0);  // the direct x link is down: 3 hops around it
  ASSERT_EQ(routes.size(), 1u);
  EXPECT_EQ(routes[0].links.size(), 3u);
  expect_chained(t, routes[0], 0, 1);
}

TEST(Routing, FailedLinksAreRoutedAround) {
  Topology t = build(rail(4, 2), 64);
  // Fail GPU 0's NIC cable in both directions: GPU 0 now reaches server 1's GPU 0 over NVLink,
  // another rail and NVLink again.
  for (LinkId id = 0; id < t.link_count(); ++id)
    if ((t.link_src(id) == t.gpu_node(0) || t.link_dst(id) == t.gpu_node(0)) && t.link(id).kind == "ib")
      t.degrade(id, 0.0);
  const Router r(t, RoutingParams{});
  EXPECT_EQ(r.hops(0, 8), 6);  // was 2
  for (const Route& route : r.routes(0, 8, 3))
    for (const LinkId l : route.links) EXPECT_GT(t.link(l).factor, 0.0);
}

TEST(Routing, SixteenThousandGpusBuildAndRouteQuickly) {
  // Scale check: 16,384 GPUs = 2,048 DGX servers in 64 scalable units of 32, 16 spines. The
  // times are printed, not asserted (speed targets belong to benchmarks).
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const Topology t = build(rail(32, 16), 16384);
  const auto t1 = Clock::now();
  RoutingParams p;
  p.flows_per_connection = 16;
  const Router r(t, p);
  size_t routes = 0;
  std::vector<Route> out;
  for (uint32_t i = 0; i < 4000; ++i) {
    out.clear();
    const uint32_t src = (i * 4099u) % 16384u, dst = (i * 7919u + 12345u) % 16384u;
    r.routes(src, dst, i, out);
    routes += out.size();
    for (const Route& route : out) EXPECT_LE(route.links.size(), 4u);
  }
  const auto t2 = Clock::now();
  EXPECT_GT(routes, 3900u * 16u);
  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf("[ timing   ] build 16384 GPUs: %.1f ms (%zu nodes, %zu links); route 4000 pairs x 16 flows: %.1f ms\n",
              ms(t1 - t0), t.node_count(), t.link_count(), ms(t2 - t1));
}

}  // namespace
}  // namespace trainsim::topology
