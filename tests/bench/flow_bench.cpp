// Flow-level network speed: max-min solves (variables per second) and end-to-end flow
// completions per second with many flows sharing links.
#include <benchmark/benchmark.h>

#include <random>

#include "sim/flow/maxmin.hpp"
#include "sim/flow/network.hpp"

namespace {

using namespace trainsim::sim;

// Two-level tree: `leaves` leaf uplinks and downlinks plus NIC links; each flow crosses
// src NIC, src uplink, dst downlink, dst NIC (4 links), as in a fat tree without spine limits.
flow::MaxMinProblem fat_tree_problem(int flows, int hosts, int leaves, uint64_t seed) {
  std::mt19937_64 rng(seed);
  flow::MaxMinProblem p;
  p.capacity.assign(static_cast<size_t>(2 * hosts + 2 * leaves), 50e9);
  for (int f = 0; f < flows; ++f) {
    const int s = static_cast<int>(rng() % static_cast<uint64_t>(hosts)),
              d = static_cast<int>(rng() % static_cast<uint64_t>(hosts));
    const int ls = s % leaves, ld = d % leaves;
    p.uses.push_back({static_cast<uint32_t>(s), static_cast<uint32_t>(2 * hosts + ls),
                      static_cast<uint32_t>(2 * hosts + leaves + ld), static_cast<uint32_t>(hosts + d)});
  }
  return p;
}

void BM_MaxMinSolve(benchmark::State& state) {
  const int flows = static_cast<int>(state.range(0));
  const auto p = fat_tree_problem(flows, flows / 4, 32, 1);
  for (auto _ : state) benchmark::DoNotOptimize(flow::solve_maxmin(p));
  state.counters["variables_per_s"] = benchmark::Counter(
      static_cast<double>(flows) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MaxMinSolve)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_FlowNetworkCompletions(benchmark::State& state) {
  const int flows = static_cast<int>(state.range(0));
  uint64_t completed = 0, solved = 0;
  for (auto _ : state) {
    Engine engine;
    flow::FlowNetwork net(engine);
    for (int l = 0; l < 64; ++l) net.add_link(Bandwidth::gbyte_per_s(50), Time::us(1));
    std::mt19937_64 rng(2);
    for (int f = 0; f < flows; ++f) {
      // Rail-like traffic: each flow crosses its own NIC link and one of 8 shared uplinks.
      const flow::LinkId route[] = {static_cast<flow::LinkId>(8 + f % 56), static_cast<flow::LinkId>(rng() % 8)};
      const Time at = Time::ns(static_cast<int64_t>(rng() % 1'000'000));
      engine.schedule_at(at, [&net, route] { net.start(Bytes(4 << 20), route, [] {}); });
    }
    engine.run();
    completed += net.flows_completed();
    solved += net.variables_solved();
  }
  state.counters["flows_per_s"] = benchmark::Counter(static_cast<double>(completed), benchmark::Counter::kIsRate);
  state.counters["variables_solved_per_s"] =
      benchmark::Counter(static_cast<double>(solved), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FlowNetworkCompletions)->Arg(1000)->Arg(4000)->Unit(benchmark::kMillisecond);

}  // namespace
