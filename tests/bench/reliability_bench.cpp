// Monte Carlo speed. One "iteration" of BM_MonteCarlo54Days16kGpus is 10,000 runs of a 54-day
// run of LLaMA-3-405B on 16,384 H100s (default failure profile: ~420 interruptions a run), sync
// checkpoints every 10 minutes, stragglers on. Target: < 10 s per iteration on one core.
#include <benchmark/benchmark.h>

#include "models/failure/inventory.hpp"
#include "models/failure/monte_carlo.hpp"
#include "models/failure/profile.hpp"
#include "models/failure/study.hpp"
#include "models/workload/job/job.hpp"

namespace {

using namespace trainsim;
using sim::config::Json;

models::failure::MonteCarloConfig config(bool horizon) {
  const models::workload::Job job = models::workload::resolve_job(
      models::workload::parse_job(Json{{"model", "llama3-405b"},
                                       {"cluster", "dgx-h100"},
                                       {"gpus", 16384},
                                       {"tp", 8},
                                       {"pp", 16},
                                       {"global_batch", 2048},
                                       {"seq_len", 8192},
                                       {"zero", 1},
                                       {"recompute", "full"},
                                       {"pp_layout", Json::array({7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7})}}));
  const auto profile = models::failure::load_failure_profile("default", {}, 1.0);
  models::failure::ReliabilityOptions o;
  if (horizon)
    o.horizon = sim::Time::s(54 * 86400);
  else
    o.tokens = 15e12 * 54.0 / 128.0;  // about 54 days of compute at 12.6 s an iteration
  o.interval = sim::Time::s(600);
  // Iteration time and straggler slowdowns as `trainsim reliability` finds them for this plan.
  return models::failure::reliability_model(job, models::failure::count_components(job), sim::Time::ms(12639), profile,
                                            o, {1.03, 1.17})
      .config;
}

void run(benchmark::State& state, bool horizon) {
  const models::failure::MonteCarloConfig c = config(horizon);
  const int64_t runs = state.range(0);
  double interruptions = 0;
  for (auto _ : state) {
    const auto s = models::failure::run_monte_carlo(c, 0, runs);
    interruptions = s.interruptions.mean;
    benchmark::DoNotOptimize(s.wall_s.mean);
  }
  state.counters["runs_per_s"] =
      benchmark::Counter(static_cast<double>(runs), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["interruptions_per_run"] = interruptions;
}

void BM_MonteCarlo54Days16kGpus(benchmark::State& state) { run(state, true); }
void BM_MonteCarloTokens16kGpus(benchmark::State& state) { run(state, false); }

}  // namespace

BENCHMARK(BM_MonteCarlo54Days16kGpus)->Arg(10000)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_MonteCarloTokens16kGpus)->Arg(10000)->Unit(benchmark::kSecond)->Iterations(1);
