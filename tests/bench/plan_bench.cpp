// Planner speed. Targets (planner issue): the fast estimate evaluates >= 100,000 configurations per
// second per core; the whole search for LLaMA-3-405B on 16,384 H100s (seq 8192, global batch
// 2048), discrete-event re-ranking of the top 100 included, takes < 30 s on 2 cores.
//   BM_FastEstimate            one thread over the whole 405B space: configurations/s (all of them,
//                              valid or not, as the search sees them)
//   BM_Plan405B_16384/threads  the full search (enumerate, estimate, re-simulate the best 100 on
//                              the flow network) with 1 or 2 threads
#include <benchmark/benchmark.h>

#include "models/workload/job/job.hpp"
#include "planner/search/estimator.hpp"
#include "planner/search/search.hpp"
#include "planner/search/space.hpp"

namespace {

using namespace trainsim::planner::search;
using trainsim::sim::config::Json;

const Json kJob{
    {"model", "llama3-405b"}, {"cluster", "dgx-h100"}, {"gpus", 16384}, {"global_batch", 2048}, {"seq_len", 8192}};

void BM_FastEstimate(benchmark::State& state) {
  const auto spec = trainsim::models::workload::parse_job(kJob);
  const auto hw = trainsim::models::workload::resolve_hardware(spec);
  const Enumeration e = enumerate(make_space(spec, kJob, hw, SpaceOptions{}), hw, spec.gpus, spec.global_batch, 8192);
  int64_t feasible = 0;
  for (auto _ : state) {
    Estimator est(hw, spec, 0.9);  // cold caches every round, as in a search
    feasible = 0;
    Estimate out;
    for (const Candidate& c : e.candidates) feasible += est.estimate(c, out) == Verdict::kOk ? 1 : 0;
    benchmark::DoNotOptimize(out);
  }
  state.counters["configurations"] = static_cast<double>(e.candidates.size());
  state.counters["feasible"] = static_cast<double>(feasible);
  state.counters["configs_per_s"] = benchmark::Counter(
      static_cast<double>(e.candidates.size()) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FastEstimate)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Plan405B_16384(benchmark::State& state) {
  const auto spec = trainsim::models::workload::parse_job(kJob);
  const auto hw = trainsim::models::workload::resolve_hardware(spec);
  SearchOptions o;
  o.threads = static_cast<int>(state.range(0));
  o.rerank = 100;
  SearchResult r;
  for (auto _ : state) {
    r = run_search(hw, spec, kJob, o);
    benchmark::DoNotOptimize(r.plans);
  }
  state.counters["considered"] = static_cast<double>(r.considered);
  state.counters["feasible"] = static_cast<double>(r.feasible);
  state.counters["estimate_s"] = r.estimate_s;
  state.counters["simulate_s"] = r.simulate_s;
}
BENCHMARK(BM_Plan405B_16384)->Arg(1)->Arg(2)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

void BM_PlanGpt3_64(benchmark::State& state) {
  // The small plan of issue 21 (`trainsim plan --model gpt3-175b --cluster dgx-a100 --gpus 64
  // --global-batch 8 --seq-len 2048`), its flow re-ranking included; target <= 10 s on 2 cores.
  const trainsim::sim::config::Json job{
      {"model", "gpt3-175b"}, {"cluster", "dgx-a100"}, {"gpus", 64}, {"global_batch", 8}, {"seq_len", 2048}};
  const auto spec = trainsim::models::workload::parse_job(job);
  const auto hw = trainsim::models::workload::resolve_hardware(spec);
  SearchOptions o;
  o.threads = 2;
  SearchResult r;
  for (auto _ : state) {
    r = run_search(hw, spec, job, o);
    benchmark::DoNotOptimize(r.plans);
  }
  state.counters["simulate_s"] = r.simulate_s;
}
BENCHMARK(BM_PlanGpt3_64)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
