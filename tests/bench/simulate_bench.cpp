// End-to-end simulation speed on built-in presets (one core). Reports tasks and events per
// second alongside wall time. Target from the foundation issue: megatron-1t on 3,072 A100s
// (TP 8, PP 64, DP 6, global batch 3072, micro-batch 1, full recompute) in under 1 s.
#include <benchmark/benchmark.h>

#include "models/workload/job.hpp"
#include "models/workload/simulate.hpp"

namespace {

using trainsim::models::workload::Job;
using trainsim::models::workload::parse_job;
using trainsim::models::workload::resolve_job;
using trainsim::models::workload::simulate;
using trainsim::sim::config::Json;

Job make_job(Json j) { return resolve_job(parse_job(j)); }

void run(benchmark::State& state, const Job& job) {
  uint64_t tasks = 0, events = 0;
  for (auto _ : state) {
    const auto r = simulate(job);
    tasks = r.tasks;
    events = r.events;
    benchmark::DoNotOptimize(r.iteration);
  }
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["events_per_s"] = benchmark::Counter(
      static_cast<double>(events) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_Simulate_1T_3072_NoSP(benchmark::State& state) {
  // The Narayanan et al. SC'21 1T configuration (2021: no sequence parallelism).
  run(state, make_job({{"model", "megatron-1t"},
                       {"cluster", "dgx-a100"},
                       {"gpus", 3072},
                       {"tp", 8},
                       {"pp", 64},
                       {"global_batch", 3072},
                       {"micro_batch", 1},
                       {"recompute", "full"},
                       {"sp", false}}));
}
BENCHMARK(BM_Simulate_1T_3072_NoSP)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_Simulate_1T_3072_SP(benchmark::State& state) {
  // Same with sequence parallelism: twice the TP collectives, so twice the tasks.
  run(state, make_job({{"model", "megatron-1t"},
                       {"cluster", "dgx-a100"},
                       {"gpus", 3072},
                       {"tp", 8},
                       {"pp", 64},
                       {"global_batch", 3072},
                       {"micro_batch", 1},
                       {"recompute", "full"},
                       {"sp", true}}));
}
BENCHMARK(BM_Simulate_1T_3072_SP)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_Simulate_Llama3_70B_1024(benchmark::State& state) {
  // The README's main job.
  run(state, make_job({{"model", "llama3-70b"},
                       {"cluster", "dgx-h100"},
                       {"gpus", 1024},
                       {"tp", 8},
                       {"pp", 4},
                       {"global_batch", 512},
                       {"micro_batch", 1},
                       {"seq_len", 8192},
                       {"recompute", "selective"}}));
}
BENCHMARK(BM_Simulate_Llama3_70B_1024)->Unit(benchmark::kMillisecond);

}  // namespace
