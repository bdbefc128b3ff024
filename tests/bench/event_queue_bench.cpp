// Event queue and engine throughput (conv. 4). Target: >= 10 M schedule+pop per second; issue 35:
// >= 20 M/s at 1 M pending events.
//
// The queue benchmarks use the classic "hold" model: the queue is filled with N events, then each
// iteration pops the earliest event (at time t) and schedules one at t + delay, so the queue stays
// at N entries. One item = one schedule + one pop. Delays come from a precomputed table so that
// random number generation stays out of the timed loop. Each runs over the event queue
// (`Ladder`, sim/radix_ladder) and, side by side, over the queue before issue 35 (`RadixHeap`).
// Delay distributions:
//   Uniform      uniform in [1 ns, 1 ms]; the queue filled uniformly over [0, 1 ms)
//   Exponential  exponential with a mean of 500 us (the textbook hold model)
//   NearFuture   a simulation's mix: 30% at the same time, 50% exponential with a mean of 10 us
//                (kernels, hops), 15% uniform up to 1 ms (collectives), 5% uniform up to 1 s
//                (far-future outliers: timeouts, checkpoints, failures)

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/engine.hpp"
#include "sim/event_queue.hpp"
#include "sim/rng.hpp"
#include "sim/units.hpp"

namespace {

using trainsim::sim::Engine;
using trainsim::sim::EventId;
using trainsim::sim::Rng;
using trainsim::sim::Time;
using Ladder = trainsim::sim::EventQueue;
using RadixHeap = trainsim::sim::RadixHeapEventQueue;

constexpr size_t kDelayTableSize = 1 << 16;  // power of two: index with a mask
constexpr int64_t kMaxDelayNs = 1'000'000;

// Uniform in [0, 1): the top 53 bits of a draw.
double unit(Rng& rng) { return static_cast<double>(rng.next_u64() >> 11) * 0x1.0p-53; }
int64_t exponential_ns(Rng& rng, double mean_ns) {
  return static_cast<int64_t>(std::ceil(-mean_ns * std::log1p(-unit(rng))));
}

struct Uniform {
  static int64_t delay_ns(Rng& rng) { return 1 + static_cast<int64_t>(rng.next_u64() % kMaxDelayNs); }
  static int64_t fill_ns(Rng& rng) { return static_cast<int64_t>(rng.next_u64() % kMaxDelayNs); }
};
struct Exponential {
  static int64_t delay_ns(Rng& rng) { return exponential_ns(rng, 500'000.0); }
  static int64_t fill_ns(Rng& rng) { return delay_ns(rng); }
};
struct NearFuture {
  static int64_t delay_ns(Rng& rng) {
    const uint64_t pct = rng.next_u64() % 100;
    if (pct < 30) return 0;
    if (pct < 80) return exponential_ns(rng, 10'000.0);
    if (pct < 95) return 1 + static_cast<int64_t>(rng.next_u64() % kMaxDelayNs);
    return 1 + static_cast<int64_t>(rng.next_u64() % 1'000'000'000);
  }
  static int64_t fill_ns(Rng& rng) { return delay_ns(rng); }
};

// Fixed seed: every run measures the same event sequence.
template <typename Delays>
std::vector<Time> make_delays() {
  Rng rng(/*seed=*/42, /*stream=*/0);
  std::vector<Time> delays(kDelayTableSize);
  for (auto& d : delays) d = Time::ns(Delays::delay_ns(rng));
  return delays;
}

// Fills `q` with n events. Callbacks capture one pointer, the common case for simulator
// components (`[this] { ... }`).
template <typename Queue, typename Delays>
void fill(Queue& q, int64_t n, int64_t* counter) {
  Rng rng(/*seed=*/42, /*stream=*/1);
  for (int64_t i = 0; i < n; ++i) q.push(Time::ns(Delays::fill_ns(rng)), [counter] { ++*counter; });
}

// Hold model: pop the earliest event, schedule a new one after a random delay.
template <typename Queue, typename Delays>
void bm_event_queue_hold(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::vector<Time> delays = make_delays<Delays>();
  int64_t counter = 0;
  Queue q;
  fill<Queue, Delays>(q, n, &counter);
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
BENCHMARK_TEMPLATE(bm_event_queue_hold, Ladder, Uniform)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);
BENCHMARK_TEMPLATE(bm_event_queue_hold, RadixHeap, Uniform)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);
BENCHMARK_TEMPLATE(bm_event_queue_hold, Ladder, Exponential)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);
BENCHMARK_TEMPLATE(bm_event_queue_hold, RadixHeap, Exponential)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);
BENCHMARK_TEMPLATE(bm_event_queue_hold, Ladder, NearFuture)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);
BENCHMARK_TEMPLATE(bm_event_queue_hold, RadixHeap, NearFuture)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

// Reschedule model, as the flow model does when rates change: each iteration pops one event,
// schedules two, and cancels one of them again (lazy O(1) cancel; the dead entry is skipped
// later). One item = one pop + two schedules + one cancel. Uniform delays.
template <typename Queue>
void bm_event_queue_hold_cancel(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::vector<Time> delays = make_delays<Uniform>();
  int64_t counter = 0;
  Queue q;
  fill<Queue, Uniform>(q, n, &counter);
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
BENCHMARK_TEMPLATE(bm_event_queue_hold_cancel, Ladder)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);
BENCHMARK_TEMPLATE(bm_event_queue_hold_cancel, RadixHeap)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

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
