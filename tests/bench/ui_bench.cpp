// The viewer's what-if loop: a knob changes, the job re-simulates and its Scene is rebuilt
// (simulate_scene), then the views draw it. Target: a 1,024-GPU job redraws in < 200 ms (issue 9):
// the schedule pass (no link recording) is what the panel waits for; link utilization follows in
// a second pass (every flow recorded), shown as it arrives.
#include <benchmark/benchmark.h>

#include "planner/cli/ui.hpp"
#include "ui/scene/simulate_scene.hpp"
#include "ui/scene/what_if.hpp"

namespace {

using trainsim::sim::config::Json;

// The viewer's default job (planner/cli/ui.hpp): LLaMA-3-70B on 1,024 H100s, TP 8, PP 4.
const Json kJob = trainsim::planner::cli::default_ui_job();

// A what-if change: PP 4 -> 8 and back (alternating, so nothing is reused), then the schedule pass.
void BM_WhatIfSchedulePass1024Gpus(benchmark::State& state) {
  const trainsim::ui::WhatIfBase base = trainsim::ui::what_if_base(kJob);
  trainsim::ui::WhatIf w = trainsim::ui::what_if_of(trainsim::models::workload::resolve_job(base.spec));
  trainsim::ui::SceneOptions o;
  o.link_utilization = false;
  bool flip = false;
  size_t tasks = 0;
  for (auto _ : state) {
    w.pp = flip ? 8 : 4;
    flip = !flip;
    const trainsim::ui::Scene s = trainsim::ui::simulate_scene(trainsim::ui::apply_what_if(base, w), o);
    tasks = s.tasks.size();
    benchmark::DoNotOptimize(s.span_ns);
  }
  state.counters["scene_tasks"] = static_cast<double>(tasks);
}
BENCHMARK(BM_WhatIfSchedulePass1024Gpus)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The second pass: every flow recorded, link utilization in 100 bins per drawn link.
void BM_LinkUtilizationPass1024Gpus(benchmark::State& state) {
  const auto job = trainsim::models::workload::resolve_job(trainsim::models::workload::parse_job(kJob));
  size_t links = 0;
  for (auto _ : state) {
    const trainsim::ui::Scene s = trainsim::ui::simulate_scene(job);
    links = s.links.size();
    benchmark::DoNotOptimize(s.span_ns);
  }
  state.counters["drawn_links"] = static_cast<double>(links);
}
BENCHMARK(BM_LinkUtilizationPass1024Gpus)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
