#include "models/workload/run/simulate.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "models/collectives/alpha_beta.hpp"
#include "models/compute/peaks.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/llm/moe.hpp"
#include "models/schedules/schedule.hpp"
#include "models/workload/dag/builder.hpp"
#include "models/workload/dag/stage_memory.hpp"
#include "models/workload/run/run_workload.hpp"
#include "sim/task/executor.hpp"

namespace trainsim::models::workload {

using sim::config::Json;

std::vector<StageReport> stage_memory_reports(const Job& job) {
  const auto& sched = schedules::ScheduleRegistry::instance().get(job.schedule, "schedule");
  const auto orders = sched.generate(static_cast<int>(job.pp), static_cast<int>(job.microbatches),
                                     schedules::ScheduleParams{static_cast<int>(job.vp)});
  std::vector<StageReport> out;
  for (int64_t s = 0; s < job.pp; ++s) {
    StageReport r;
    r.stage = static_cast<int32_t>(s);
    r.rank = static_cast<int32_t>(job.tp * job.cp * job.dp * s);
    // The compute stream runs the order as written, so the chunks alive from each forward to its
    // backward (or W) are exactly the activation footprint the simulation will show.
    const ActivationPeak peak = activation_peak(job, s, orders[static_cast<size_t>(s)]);
    r.peak_in_flight = peak.chunks;
    r.memory = memory::stage_memory(stage_memory_input(job, s));
    r.memory.activations = sim::Bytes(peak.bytes);
    r.memory.host = sim::Bytes(host_offload_bytes(job, s, orders[static_cast<size_t>(s)]));
    out.push_back(r);
  }
  return out;
}

namespace {
// The report of a completed run: per-stage breakdown and activation peak (the first simulated
// rank of a stage is its representative), the critical stage, throughput and FLOP rates.
void summarize(SimulationResult& res, const Workload& w, const sim::task::TaskExecutor& exec,
               const memory::ActivationTimeline& timeline) {
  const Job& job = res.job;
  double flops_sum = 0;
  for (uint32_t slot = 0; slot < w.ranks.size(); ++slot) {
    const TimeBreakdown tb = rank_breakdown(w, exec, slot, res.iteration);
    flops_sum += tb.flops.count();
    StageReport& st = res.stages[static_cast<size_t>(w.ranks[slot].stage)];
    if (w.ranks[slot].dp_index == 0 && w.ranks[slot].tp_index == 0 && w.ranks[slot].cp_index == 0) {
      st.time = tb;
      st.memory.activations = sim::Bytes(timeline.peak(slot));
    }
  }
  for (const auto& st : res.stages)
    if (st.time.compute > res.stages[static_cast<size_t>(res.critical_stage)].time.compute)
      res.critical_stage = st.stage;
  res.fits = res.peak_memory() <= res.capacity && res.host_fits();

  const double iter_s = res.iteration.seconds();
  const double gpus = static_cast<double>(job.gpus);
  res.tokens_per_s = static_cast<double>(job.global_batch * job.seq_len) / iter_s;
  // MoE: only the parameters a token uses (router, top_k routed and the shared experts) count.
  const double fwd_flops = job.model.moe ? llm::moe_forward_model_flops_per_sequence(job.model, job.seq_len)
                                         : llm::forward_model_flops_per_sequence(job.model, job.seq_len);
  res.model_flops = 3.0 * fwd_flops * static_cast<double>(job.global_batch);
  res.model_tflops_per_gpu = res.model_flops / iter_s / gpus / 1e12;
  res.mfu = res.model_tflops_per_gpu * 1e12 / job.gpu.peak_bf16.per_second();
  // Every simulated rank stands for the same number of GPUs.
  res.hardware_tflops_per_gpu = flops_sum / static_cast<double>(w.ranks.size()) / iter_s / 1e12;
}

}  // namespace

SimulationResult simulate(const Job& job, const SimulateOptions& options) {
  if (!options.faults.empty()) check_faults(job, options.faults);
  SimulationResult res;
  res.job = job;
  res.band = prediction_band(job);
  res.capacity = job.gpu.memory - job.gpu.reserved_memory;
  res.host_capacity = job.cluster.host_memory;
  res.stages = stage_memory_reports(job);
  for (const auto& st : res.stages) {
    if (st.memory.total() > res.stages[static_cast<size_t>(res.worst_memory_stage)].memory.total())
      res.worst_memory_stage = st.stage;
  }
  res.fits = res.peak_memory() <= res.capacity && res.host_fits();
  if (!res.fits) return res;

  const compute::ComputeModel cm(job.gpu, job.precision);
  const collectives::AlphaBetaModel comm(job.cluster);
  const Workload w = build_workload(job, cm, comm, options.fidelity);
  std::optional<memory::ActivationTimeline> timeline;
  run_workload(
      w, job, options, [&](sim::Engine& engine) { timeline.emplace(engine, w.memory_events, w.ranks.size()); },
      [&](const RunView& run) {
        if (run.over_budget) {
          res.over_budget = true;
          res.events = run.engine.events_executed();
          return;
        }
        res.iteration = run.end;
        res.network = run.network;
        res.faults = run.faults;
        res.simulated = true;
        res.tasks = w.graph.size();
        res.events = run.engine.events_executed();
        res.simulated_ranks = w.ranks.size();
        // Stopped part-way: no breakdown, throughput or activation peak of a whole iteration.
        if (res.completed()) summarize(res, w, run.exec, *timeline);
      });
  return res;
}

PlanError does_not_fit_error(const SimulationResult& r, const std::string& hint) {
  if (r.peak_memory() <= r.capacity && !r.host_fits()) {
    // The device fits; the offloads do not fit the host.
    const auto worst =
        std::max_element(r.stages.begin(), r.stages.end(),
                         [](const StageReport& a, const StageReport& b) { return a.memory.host < b.memory.host; });
    char over[64];
    std::snprintf(over, sizeof over, "%.2f GiB", (worst->memory.host - r.host_capacity).gib());
    return PlanError("stage " + std::to_string(worst->stage) + " host memory",
                     "its offloads keep " + sim::to_string(worst->memory.host) +
                         " per GPU in host memory but the host has " + sim::to_string(r.host_capacity) +
                         " per GPU (cluster host_memory), " + over + " over",
                     "use more GPUs (the optimizer states shard over the data-parallel ranks with --zero 1 or more, "
                     "the offloaded layers over the pipeline stages), offload fewer activation layers "
                     "(--offload-activation-layers), or keep on the GPU what it has room for");
  }
  const auto& st = r.stages[static_cast<size_t>(r.worst_memory_stage)];
  char over[64];
  std::snprintf(over, sizeof over, "%.2f GiB", (st.memory.total() - r.capacity).gib());
  return PlanError("stage " + std::to_string(st.stage) + " memory",
                   "needs " + sim::to_string(st.memory.total()) + " per GPU but only " + sim::to_string(r.capacity) +
                       " is usable, " + over + " over",
                   hint);
}

sim::Bytes SimulationResult::peak_host_memory() const {
  sim::Bytes peak;
  for (const auto& st : stages) peak = std::max(peak, st.memory.host);
  return peak;
}

sim::Bytes SimulationResult::peak_memory() const {
  sim::Bytes peak;
  for (const auto& st : stages) peak = std::max(peak, st.memory.total());
  return peak;
}

Json SimulationResult::to_json() const {
  Json stages_json = Json::array();
  for (const auto& st : stages) {
    Json m = st.memory.to_json();
    m["stage"] = st.stage;
    m["peak_in_flight_microbatches"] = st.peak_in_flight;
    m["capacity_bytes"] = capacity.count();
    m["host_capacity_bytes"] = host_capacity.count();
    m["fits"] = stage_fits(st.memory);
    stages_json.push_back(m);
  }
  Json out{{"schema_version", 1},
           {"fits", fits},
           {"peak_memory_bytes", peak_memory().count()},
           {"memory", stages_json},
           {"config", job.to_json()}};
  out["mfu_formula"] =
      "model FLOPs = 3 x forward matmul FLOPs (attention over full s x s, LM head, no recompute; "
      "Narayanan et al. Eq. 3 without the recompute term) / (iteration time x GPUs x dense BF16 peak)";
  if (!simulated) {
    out["iteration_time_s"] = nullptr;
    return out;
  }
  if (faults) out["faults"] = faults->to_json();
  if (!completed()) {
    out["iteration_time_s"] = nullptr;
    out["simulation"] = Json{{"tasks", tasks}, {"events", events}, {"simulated_ranks", simulated_ranks}};
    return out;
  }
  const StageReport& crit = stages[static_cast<size_t>(critical_stage)];
  Json per_stage = Json::array();
  for (const auto& st : stages) {
    Json t = st.time.to_json();
    t["stage"] = st.stage;
    per_stage.push_back(t);
  }
  Json tb = crit.time.to_json();
  tb["stage"] = crit.stage;
  tb["per_stage"] = per_stage;
  out["iteration_time_s"] = iteration.seconds();
  out["band"] = band.to_json();
  out["tokens_per_s"] = tokens_per_s;
  out["model_tflops_per_gpu"] = model_tflops_per_gpu;
  out["mfu"] = mfu;
  compute::put_mfu_peaks(out, mfu, job.gpu, job.precision);
  out["hardware_tflops_per_gpu"] = hardware_tflops_per_gpu;
  out["time_breakdown"] = tb;
  out["simulation"] = Json{{"tasks", tasks}, {"events", events}, {"simulated_ranks", simulated_ranks}};
  if (network) {
    out["simulation"]["network"] = network->to_json();
  }
  return out;
}

}  // namespace trainsim::models::workload
