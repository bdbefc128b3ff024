// `trainsim calibrate` on 100 logged runs (issue 34; target <= 30 s on 2 cores): Llama 3 8B and
// 70B jobs on 8-512 H100s over the parallel configurations a team runs, under nemo-24.07 FP8, each
// "measured" at the presets' prediction times a fixed factor (GEMMs and the network 10-25 % slower
// than the presets). Times the whole fit: the presets' simulation of every run, the sensitivity
// simulations, the fitted re-simulations and the leave-one-out solves.
#include <benchmark/benchmark.h>

#include <thread>

#include "models/calibration/runs/run_fit.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/run/simulate.hpp"

namespace {

using trainsim::sim::config::Json;
namespace cal = trainsim::models::calibration;
namespace wl = trainsim::models::workload;

std::vector<cal::RunRecord> hundred_runs() {
  std::vector<cal::RunRecord> runs;
  // (model, gpus, tp, pp, vp, micro-batch) over 8-512 GPUs.
  struct Shape {
    const char* model;
    int64_t gpus, tp, pp, vp, mb;
  };
  std::vector<Shape> shapes;
  for (int64_t gpus : {8, 16, 32, 64, 128, 256, 512})
    for (int64_t tp : {2, 4, 8}) {
      shapes.push_back({"llama3-8b", gpus, tp, 1, 1, 1});
      shapes.push_back({"llama3-8b", gpus, tp, 1, 1, 2});
      shapes.push_back({"llama3-8b", gpus, tp, 2, 1, 1});
      shapes.push_back({"llama2-13b", gpus, tp, 1, 1, 1});
      shapes.push_back({"llama2-13b", gpus, tp, 2, 5, 1});
      if (gpus >= 32) {
        shapes.push_back({"llama3-70b", gpus, tp, 4, 5, 1});
        shapes.push_back({"llama3-70b", gpus, tp, 4, 1, 1});
      }
      if (gpus >= 64) shapes.push_back({"llama3-70b", gpus, tp, 8, 5, 1});
    }
  for (const Shape& s : shapes) {
    if (runs.size() == 100) break;
    if (s.tp * s.pp > s.gpus) continue;
    cal::RunRecord r;
    r.id = std::string(s.model) + "-g" + std::to_string(s.gpus) + "-t" + std::to_string(s.tp) + "-p" +
           std::to_string(s.pp) + "-v" + std::to_string(s.vp) + "-mb" + std::to_string(s.mb);
    r.path = "runs[" + std::to_string(runs.size()) + "]";
    r.job = Json{{"model", s.model},   {"cluster", "dgx-h100"}, {"stack", "nemo-24.07"},
                 {"precision", "fp8"}, {"gpus", s.gpus},        {"tp", s.tp},
                 {"pp", s.pp},         {"micro_batch", s.mb},   {"global_batch", s.gpus / (s.tp * s.pp) * s.mb * 8}};
    if (s.vp > 1) {
      r.job["vp"] = s.vp;
      r.job["schedule"] = "interleaved";
    }
    const auto res = wl::simulate(wl::resolve_job(wl::parse_job(r.job)));
    if (!res.fits) continue;
    r.metric = cal::RunMetric::kTokensPerGpu;
    // A cluster 10-25 % slower than the presets, more so for the larger jobs.
    const double slower = 0.90 - 0.15 * static_cast<double>(s.gpus) / 512.0;
    r.measured = slower * res.tokens_per_s / static_cast<double>(s.gpus);
    runs.push_back(std::move(r));
  }
  return runs;
}

void BM_Calibrate100Runs(benchmark::State& state) {
  const std::vector<cal::RunRecord> runs = hundred_runs();
  cal::RunFitOptions o;
  o.threads = static_cast<int>(state.range(0));
  cal::RunFitResult r;
  for (auto _ : state) {
    r = cal::fit_runs(runs, o);
    benchmark::DoNotOptimize(r.band);
  }
  state.counters["runs"] = static_cast<double>(runs.size());
  state.counters["simulations"] = static_cast<double>(r.simulations);
  state.counters["median_before"] = r.median_before;
  state.counters["median_cv"] = r.median_cv;
}
BENCHMARK(BM_Calibrate100Runs)->Arg(2)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
