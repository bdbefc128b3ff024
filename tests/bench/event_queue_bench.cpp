// Event queue and engine throughput (conv. 4). Target: >= 10 M schedule+pop per second.
//
// The queue benchmarks use the classic "hold" model: the queue is filled with N events, then each
// iteration pops the earliest event (at time t) and schedules one at t + delay, so the heap stays at
// N entries. One item = one schedule + one pop. Delays come from a precomputed table so that random
// number generation stays out of the timed loop.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sim/engine.hpp"
#include "sim/event_queue.hpp"
#include "sim/rng.hpp"
#include "sim/units.hpp"

namespace {

using trainsim::sim::Engine;
using trainsim::sim::EventId;
using trainsim::sim::EventQueue;
using trainsim::sim::Rng;
using trainsim::sim::Time;

constexpr size_t kDelayTableSize = 1 << 16;  // power of two: index with a mask
constexpr int64_t kMaxDelayNs = 1'000'000;

// Delays uniform in [1, kMaxDelayNs] ns, fixed seed: every run measures the same event sequence.
std::vector<Time> make_delays() {
  Rng rng(/*seed=*/42, /*stream=*/0);
  std::vector<Time> delays(kDelayTableSize);
  for (auto& d : delays) d = Time::ns(1 + static_cast<int64_t>(rng.next_u64() % kMaxDelayNs));
  return delays;
}

// Fills `q` with n events spread over [0, kMaxDelayNs) ns. Callbacks capture one pointer, the
// common case for simulator components (`[this] { ... }`).
void fill(EventQueue& q, int64_t n, int64_t* counter) {
  Rng rng(/*seed=*/42, /*stream=*/1);
  for (int64_t i = 0; i < n; ++i)
    q.push(Time::ns(static_cast<int64_t>(rng.next_u64() % kMaxDelayNs)), [counter] { ++*counter; });
}

// Hold model: pop the earliest event, schedule a new one after a random delay.
void bm_event_queue_hold(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::vector<Time> delays = make_delays();
  int64_t counter = 0;
  EventQueue q;
  fill(q, n, &counter);
  size_t k = 0;
  for (auto _ : state) {
    Time at;
    auto cb = q.pop(at);
    benchmark::DoNotOptimize(cb);
    q.push(at + delays[k++ & (kDelayTableSize - 1)], [c = &counter] { ++*c; });
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["heap_size"] = static_cast<double>(q.size_live());
}
BENCHMARK(bm_event_queue_hold)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

// Reschedule model, as the flow model does when rates change: each iteration pops one event,
// schedules two, and cancels one of them again (lazy O(1) cancel; the dead entry is skipped
// later). One item = one pop + two schedules + one cancel.
void bm_event_queue_hold_cancel(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::vector<Time> delays = make_delays();
  int64_t counter = 0;
  EventQueue q;
  fill(q, n, &counter);
  size_t k = 0;
  for (auto _ : state) {
    Time at;
    auto cb = q.pop(at);
    benchmark::DoNotOptimize(cb);
    const EventId doomed = q.push(at + delays[k++ & (kDelayTableSize - 1)], [c = &counter] { ++*c; });
    q.push(at + delays[k++ & (kDelayTableSize - 1)], [c = &counter] { ++*c; });
    q.cancel(doomed);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["heap_size"] = static_cast<double>(q.size_live());
}
BENCHMARK(bm_event_queue_hold_cancel)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

// Engine: `chains` independent event chains, each rescheduling itself with its own period until
// it has run its share of the N events. Measures the whole loop: pop, clock update, callback
// call and schedule_in. One item = one executed event.
struct Chain {
  Engine* engine;
  int64_t left;
  Time period;
};

struct ChainTick {
  Chain* chain;
  void operator()() const {
    if (--chain->left > 0) chain->engine->schedule_in(chain->period, ChainTick{chain});
  }
};

void bm_engine_self_rescheduling(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int64_t chains = state.range(1);
  uint64_t executed = 0;
  for (auto _ : state) {
    Engine engine;
    std::vector<Chain> state_of(static_cast<size_t>(chains));
    for (int64_t c = 0; c < chains; ++c) {
      // Co-prime-ish periods interleave the chains instead of running them in lockstep.
      state_of[static_cast<size_t>(c)] = Chain{&engine, n / chains, Time::ns(100 + c % 97)};
      engine.schedule_at(Time::ns(c), ChainTick{&state_of[static_cast<size_t>(c)]});
    }
    executed += engine.run();
  }
  state.SetItemsProcessed(static_cast<int64_t>(executed));
}
BENCHMARK(bm_engine_self_rescheduling)
    ->Args({1 << 20, 1})
    ->Args({1 << 20, 1 << 10})
    ->Args({1 << 20, 1 << 16})
    ->Unit(benchmark::kMillisecond);

}  // namespace
