// Flow-level network speed: max-min solves (variables solved per second) on fat-tree-like
// instances, and end-to-end flow completions per second with many flows sharing links.
// Run a Release build: ./flow_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "sim/flow/maxmin.hpp"
#include "sim/flow/network.hpp"

namespace {

using namespace trainsim::sim;

// A two-tier fat tree (leaf-spine), 16 hosts per leaf and 16 spines, no oversubscription.
// Link ids: host uplinks [0, H), host downlinks [H, 2H), leaf->spine [2H, 2H + L*S),
// spine->leaf [2H + L*S, 2H + 2*L*S). A flow between leaves crosses 4 links (ECMP picks the
// spine), within a leaf 2.
struct FatTree {
  static constexpr uint32_t kHostsPerLeaf = 16, kSpines = 16;
  uint32_t hosts, leaves;
  explicit FatTree(uint32_t h) : hosts(h), leaves((h + kHostsPerLeaf - 1) / kHostsPerLeaf) {}
  uint32_t link_count() const { return 2 * hosts + 2 * leaves * kSpines; }
  std::vector<uint32_t> route(uint32_t src, uint32_t dst, uint32_t spine) const {
    const uint32_t ls = src / kHostsPerLeaf, ld = dst / kHostsPerLeaf;
    if (ls == ld) return {src, hosts + dst};
    return {src, 2 * hosts + ls * kSpines + spine, 2 * hosts + leaves * kSpines + ld * kSpines + spine, hosts + dst};
  }
};

// `flows` random host pairs on a fat tree with one host per 4 flows; 400 Gb/s everywhere.
flow::MaxMinProblem fat_tree_problem(uint32_t flows, uint64_t seed) {
  const FatTree ft(std::max<uint32_t>(flows / 4, 2));
  std::mt19937_64 rng(seed);
  flow::MaxMinProblem p;
  p.reserve(ft.link_count(), flows, 4 * size_t{flows});
  for (uint32_t l = 0; l < ft.link_count(); ++l) p.add_constraint(50e9);
  for (uint32_t f = 0; f < flows; ++f) {
    const auto s = static_cast<uint32_t>(rng() % ft.hosts);
    auto d = static_cast<uint32_t>(rng() % (ft.hosts - 1));
    d += d >= s ? 1 : 0;
    const auto spine = static_cast<uint32_t>(rng() % FatTree::kSpines);
    p.add_variable(ft.route(s, d, spine), rng() % 8 == 0 ? 2.0 : 1.0);
  }
  return p;
}

void BM_MaxMinSolve(benchmark::State& state) {
  const auto flows = static_cast<uint32_t>(state.range(0));
  const auto p = fat_tree_problem(flows, 1);
  flow::MaxMinSolver solver;
  std::vector<double> rates;
  for (auto _ : state) {
    solver.solve(p, rates);
    benchmark::DoNotOptimize(rates.data());
  }
  state.counters["variables_per_s"] = benchmark::Counter(
      static_cast<double>(flows) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MaxMinSolve)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

// Random arrivals: `flows` 4 MiB transfers between random hosts of a 256-host fat tree, arriving
// uniformly over 1 ms, so that hundreds run at once and every arrival or departure re-solves a
// large shared component.
void BM_FlowNetworkRandomArrivals(benchmark::State& state) {
  const auto flows = static_cast<uint32_t>(state.range(0));
  const FatTree ft(256);
  uint64_t completed = 0, solved = 0;
  for (auto _ : state) {
    Engine engine;
    flow::FlowNetwork net(engine);
    for (uint32_t l = 0; l < ft.link_count(); ++l) net.add_link(Bandwidth::gbit_per_s(400), Time::us(1));
    std::mt19937_64 rng(2);
    for (uint32_t f = 0; f < flows; ++f) {
      const auto s = static_cast<uint32_t>(rng() % ft.hosts);
      const auto d = static_cast<uint32_t>((s + 1 + rng() % (ft.hosts - 1)) % ft.hosts);
      auto route = ft.route(s, d, static_cast<uint32_t>(rng() % FatTree::kSpines));
      const Time at = Time::ns(static_cast<int64_t>(rng() % 1'000'000));
      engine.schedule_at(at, [&net, route = std::move(route)] { net.start(Bytes(4 << 20), route, [] {}); });
    }
    engine.run();
    completed += net.stats().flows_completed;
    solved += net.stats().variables_solved;
  }
  state.counters["flows_per_s"] = benchmark::Counter(static_cast<double>(completed), benchmark::Counter::kIsRate);
  state.counters["variables_solved_per_s"] =
      benchmark::Counter(static_cast<double>(solved), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FlowNetworkRandomArrivals)->Arg(1'000)->Arg(4'000)->Unit(benchmark::kMillisecond);

// Collective-like steps: every host sends 1 MiB to a host `shift` away, all at once; the next
// step starts when the whole step has arrived (a ring with 64 steps). Flows of a step join at one
// instant, so they cost one solve; they end together too.
void BM_FlowNetworkSteps(benchmark::State& state) {
  const auto hosts = static_cast<uint32_t>(state.range(0));
  constexpr uint32_t kSteps = 64;
  const FatTree ft(hosts);
  uint64_t completed = 0, solved = 0;
  for (auto _ : state) {
    Engine engine;
    flow::FlowNetwork net(engine);
    for (uint32_t l = 0; l < ft.link_count(); ++l) net.add_link(Bandwidth::gbit_per_s(400), Time::us(1));
    uint32_t step = 0, pending = 0;
    std::function<void()> start_step = [&] {
      if (step == kSteps) return;
      const uint32_t shift = 1 + step * 7 % (hosts - 1);
      ++step;
      pending = hosts;
      for (uint32_t s = 0; s < hosts; ++s)
        net.start(Bytes(1 << 20), ft.route(s, (s + shift) % hosts, s % FatTree::kSpines), [&] {
          if (--pending == 0) start_step();
        });
    };
    start_step();
    engine.run();
    completed += net.stats().flows_completed;
    solved += net.stats().variables_solved;
  }
  state.counters["flows_per_s"] = benchmark::Counter(static_cast<double>(completed), benchmark::Counter::kIsRate);
  state.counters["variables_solved_per_s"] =
      benchmark::Counter(static_cast<double>(solved), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FlowNetworkSteps)->Arg(256)->Arg(4096)->Unit(benchmark::kMillisecond);

}  // namespace
