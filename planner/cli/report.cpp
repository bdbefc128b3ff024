#include "planner/cli/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "models/compute/peaks.hpp"
#include "models/llm/recompute_modules.hpp"
#include "models/workload/job/cuda_graphs.hpp"

namespace trainsim::planner::cli {

using sim::config::Json;

std::string fmt(const char* f, double v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

namespace {
std::string gib(sim::Bytes b) { return fmt("%.2f", b.gib()); }
std::string secs(sim::Time t) { return fmt("%.4f", t.seconds()); }
std::string pct(sim::Time part, sim::Time whole) {
  return fmt("%5.1f%%", whole.count_ns() > 0
                            ? 100.0 * static_cast<double>(part.count_ns()) / static_cast<double>(whole.count_ns())
                            : 0.0);
}

Json rounded(const Json& j) {
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (v == 0.0 || !std::isfinite(v)) return j;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return Json(std::strtod(buf, nullptr));
  }
  if (j.is_object()) {
    Json out = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = rounded(it.value());
    return out;
  }
  if (j.is_array()) {
    Json out = Json::array();
    for (const auto& x : j) out.push_back(rounded(x));
    return out;
  }
  return j;
}
}  // namespace

std::string canonical_json(const Json& j) { return rounded(j).dump(2); }

namespace {
// "7,8x14,7": runs of equal layer counts folded.
std::string layout_text(const std::vector<int64_t>& layers) {
  std::string out;
  for (size_t i = 0; i < layers.size();) {
    size_t k = i;
    while (k < layers.size() && layers[k] == layers[i]) ++k;
    if (!out.empty()) out += ',';
    out += std::to_string(layers[i]);
    if (k - i > 1) {
      out += 'x';
      out += std::to_string(k - i);
    }
    i = k;
  }
  return out;
}
}  // namespace

void check_strict(bool strict, const models::workload::Job& job) {
  if (!strict) return;
  const models::workload::PredictionBand b = models::workload::prediction_band(job);
  if (!b.extrapolated) return;
  std::string what;
  for (size_t i = 0; i < b.outside.size(); ++i) what += (i ? "; " : "") + b.outside[i];
  throw ConfigError("--strict", "the prediction is extrapolated, outside the evidence: " + what,
                    "calibrate with runs that cover it: `trainsim calibrate RUNS.json`; or drop --strict");
}

void print_report(std::ostream& out, const models::workload::SimulationResult& r) {
  const auto& j = r.job;
  out << "trainsim simulate: " << j.model.name << " on " << j.gpus << " x " << j.gpu.name << " (" << j.cluster.name
      << ")\n";
  out << "  parallel   tp " << j.tp << "  pp " << j.pp << "  dp " << j.dp << "  vp " << j.vp << "  sp "
      << (j.sp ? "on" : "off") << "  zero " << j.zero << "  recompute " << to_string(j.recompute);
  if (j.recompute_modules & ~uint32_t{models::llm::kRecomputeCoreAttn})
    out << '(' << models::llm::recompute_modules_string(j.recompute_modules) << ')';
  out << "  schedule " << j.schedule << "\n";
  if (std::adjacent_find(j.layers.begin(), j.layers.end(), std::not_equal_to<>()) != j.layers.end())
    out << "  layout     " << layout_text(j.layers) << " layers per virtual stage (--pp-layout to change)\n";
  // Only what a job uses, so that plain dense runs print as before.
  if (j.cp > 1 || j.ep > 1 || j.dp_shard < j.dp_cp() || j.offload_optimizer || j.offload_activations ||
      j.tp_comm_overlap || j.cuda_graphs != 0 || j.bf16_first_layers > 0 || j.bf16_last_layers > 0) {
    out << "  also      ";
    if (j.cp > 1) out << " cp " << j.cp << " (" << to_string(j.cp_algo) << ", ulysses " << j.cp_ulysses << ")";
    if (j.ep > 1)
      out << " ep " << j.ep << " etp " << j.etp << " (dispatcher " << models::workload::to_string(j.moe_dispatcher)
          << ", balance " << models::workload::to_string(j.moe_balance) << ")";
    if (j.dp_shard < j.dp_cp()) out << " dp_shard " << j.dp_shard;
    if (j.offload_optimizer) out << " offload_optimizer";
    if (j.offload_activations) out << " offload_activations";
    if (j.tp_comm_overlap) out << " tp_comm_overlap";
    if (j.cuda_graphs != 0) out << " cuda_graphs " << models::workload::cuda_graph_scope_string(j.cuda_graphs);
    if (j.bf16_first_layers > 0 || j.bf16_last_layers > 0)
      out << " bf16_layers first " << j.bf16_first_layers << " last " << j.bf16_last_layers;
    out << "\n";
  }
  out << "  batch      micro " << j.micro_batch << "  global " << j.global_batch << "  (" << j.microbatches
      << " micro-batches per pipeline)  seq " << j.seq_len << "  precision " << models::compute::to_string(j.precision)
      << "  attention " << to_string(j.attention) << "\n";
  out << "  stack      " << j.stack.name << " (" << j.stack.framework << ")\n\n";
  if (r.simulated && !r.completed()) {
    const auto& f = *r.faults;
    out << "Iteration did not complete: stopped at " << secs(f.stopped_at) << " s (" << f.stop_reason << ")\n";
    out << "Work done             " << f.compute_tasks_done << " of " << f.compute_tasks << " compute tasks ("
        << fmt("%.1f%%", f.compute_tasks > 0
                             ? 100.0 * static_cast<double>(f.compute_tasks_done) / static_cast<double>(f.compute_tasks)
                             : 0.0)
        << "), " << f.tasks_done << " of " << f.tasks << " tasks\n\n";
  } else if (r.simulated) {
    const auto& c = r.stages[static_cast<size_t>(r.critical_stage)].time;
    const std::string band = fmt(" ± %.1f %%", 100.0 * r.band.relative);
    out << "Iteration time        " << secs(r.iteration) << " s" << band << "\n";
    out << "Throughput            " << fmt("%.0f", r.tokens_per_s) << " tokens/s" << band << "\n";
    out << "  (band: " << r.band.basis << ")\n";
    if (r.band.extrapolated) {
      out << "  EXTRAPOLATED: outside the evidence:";
      for (size_t i = 0; i < r.band.outside.size(); ++i) out << (i ? "; " : " ") << r.band.outside[i];
      out << "\n";
    }
    out << "Model TFLOP/s per GPU " << fmt("%.1f", r.model_tflops_per_gpu) << "   MFU " << fmt("%.1f%%", 100.0 * r.mfu)
        << " of dense BF16 peak (" << fmt("%.0f", j.gpu.peak_bf16.tflops_value()) << " TFLOP/s)";
    // A quantized job also against its own precision's dense peak (models/compute/peaks.hpp).
    if (const auto low = models::compute::precision_peak(j.gpu, j.precision))
      out << ", " << fmt("%.1f%%", 100.0 * models::compute::utilization_of(r.mfu, j.gpu, *low)) << " of dense "
          << low->label << " peak (" << fmt("%.0f", low->rate.tflops_value()) << " TFLOP/s)";
    out << "\n";
    out << "  (model FLOPs = 3 x forward matmul FLOPs incl. full s x s attention scores and LM head; no recompute)\n";
    out << "Hardware TFLOP/s/GPU  " << fmt("%.1f", r.hardware_tflops_per_gpu)
        << "   (kernels executed, recompute included)\n\n";
    out << "Where the time goes (stage " << r.critical_stage << ", the most loaded):\n";
    const sim::Time it = r.iteration;
    out << "  compute             " << secs(c.compute) << " s  " << pct(c.compute, it) << "   (recompute "
        << secs(c.recompute) << " s)\n";
    if (j.model.moe)
      out << "  host-bound (sync)   " << secs(c.host_sync) << " s  " << pct(c.host_sync, it)
          << "   (GPU waiting for the host after the MoE dispatcher's synchronizations)\n";
    out << "  exposed TP comm     " << secs(c.tp_exposed) << " s  " << pct(c.tp_exposed, it) << "\n";
    out << "  exposed PP comm     " << secs(c.pp_exposed) << " s  " << pct(c.pp_exposed, it) << "\n";
    out << "  exposed DP comm     " << secs(c.dp_exposed) << " s  " << pct(c.dp_exposed, it) << "\n";
    if (j.cp > 1) out << "  exposed CP comm     " << secs(c.cp_exposed) << " s  " << pct(c.cp_exposed, it) << "\n";
    if (j.ep > 1) out << "  exposed EP comm     " << secs(c.ep_exposed) << " s  " << pct(c.ep_exposed, it) << "\n";
    if (j.offload_optimizer || j.offload_activations)
      out << "  exposed host copies " << secs(c.offload_exposed) << " s  " << pct(c.offload_exposed, it) << "\n";
    out << "  pipeline bubble     " << secs(c.bubble) << " s  " << pct(c.bubble, it) << "\n\n";
  } else {
    out << "Not simulated: the configuration does not fit in memory.\n\n";
  }
  if (r.simulated && r.faults) {
    out << "Faults (" << (r.completed() ? "the iteration completed" : "the job stopped") << "):\n";
    for (const auto& o : r.faults->faults)
      out << "  " << models::workload::to_string(o.fault) << "  " << o.effect << "\n";
    out << "\n";
  }
  out << "Memory per GPU by pipeline stage (GiB; usable " << gib(r.capacity) << " of " << gib(j.gpu.memory) << "):\n";
  out << "  stage  weights  grads  optim    fp8  activ (in flight)  buffers  allocated  reserved  framework   total  "
         "fits\n";
  const size_t n = r.stages.size();
  for (size_t i = 0; i < n; ++i) {
    // Long pipelines: show the first three, the worst and the last stages.
    if (n > 8 && i >= 3 && i + 1 != n && static_cast<int32_t>(i) != r.worst_memory_stage) {
      if (i == 3) out << "  ...\n";
      continue;
    }
    const auto& m = r.stages[i].memory;
    char line[240];
    std::snprintf(line, sizeof line, "  %5zu  %7s  %5s  %5s  %5s  %5s (%3lld)        %7s  %9s  %8s  %9s  %6s  %s\n", i,
                  gib(m.weights).c_str(), gib(m.gradients).c_str(), gib(m.optimizer).c_str(), gib(m.fp8_state).c_str(),
                  gib(m.activations).c_str(), static_cast<long long>(r.stages[i].peak_in_flight),
                  gib(m.buffers).c_str(), gib(m.allocated()).c_str(), gib(m.reserved()).c_str(),
                  gib(m.framework).c_str(), gib(m.total()).c_str(), r.stage_fits(m) ? "yes" : "NO");
    out << line;
  }
  if (r.peak_host_memory().count() > 0) {
    // Offload: what waits in host memory per GPU, against what the host has.
    out << "  host memory (offload) " << gib(r.peak_host_memory()) << " GiB per GPU, most loaded stage; ";
    if (r.host_capacity.count() > 0)
      out << "the host has " << gib(r.host_capacity)
          << " GiB (cluster host_memory): " << (r.host_fits() ? "fits" : "DOES NOT FIT") << "\n";
    else
      out << "not checked (the cluster gives no host_memory)\n";
  }
  if (r.simulated)
    out << "\nSimulated " << r.simulated_ranks << (r.simulated_ranks == 1 ? " rank (" : " ranks (") << r.tasks
        << " tasks, " << r.events << " events)\n";
  if (r.simulated && r.network) {
    const auto& n = *r.network;
    out << "Network: flow-level on " << n.topology << " (" << n.links << " links): " << n.collectives + n.memoized
        << " communication tasks, " << n.flows << " flows, " << n.solves << " max-min solves; " << n.memoized
        << " reused the duration of an identical collective that ran alone\n";
  } else if (r.simulated) {
    out << "Network: analytic alpha-beta model\n";
  }
}

void print_iterations(std::ostream& out, const models::workload::IterationsResult& ir, bool faults) {
  const auto n = static_cast<int64_t>(ir.iterations.size());
  const sim::Time free_total = ir.fault_free * n;
  out << "\nIterations: " << n << " of " << ir.requested << " back to back, total " << secs(ir.total()) << " s";
  if (!faults) {
    out << " (" << n << " x one iteration: without faults every iteration is the same)\n";
    return;
  }
  out << " vs " << secs(free_total) << " s fault-free ("
      << fmt("%+.2f%%",
             free_total.count_ns() > 0
                 ? 100.0 *
                       (static_cast<double>(ir.total().count_ns()) / static_cast<double>(free_total.count_ns()) - 1.0)
                 : 0.0)
      << (ir.completed ? "" : "; the job stopped") << ")\n";
  out << "  iter    time (s)  vs fault-free  note\n";
  for (int64_t k = 0; k < n; ++k) {
    const auto& it = ir.iterations[static_cast<size_t>(k)];
    char line[160];
    std::snprintf(line, sizeof line, "  %4lld  %10.4f  %12.4fx  ", static_cast<long long>(k), it.time.seconds(),
                  ir.fault_free.count_ns() > 0
                      ? static_cast<double>(it.time.count_ns()) / static_cast<double>(ir.fault_free.count_ns())
                      : 0.0);
    out << line << it.note << (it.completed ? "" : " (stopped)") << (k == ir.detail_index ? " [detailed above]" : "")
        << "\n";
  }
  if (ir.detail_index > 0)
    out << "  (iteration " << ir.detail_index << ", detailed above, began at " << secs(ir.detail_start)
        << " s: its fault times are offsets from then)\n";
  for (const auto& f : ir.not_reached)
    out << "  " << models::workload::to_string(f) << " not reached within " << ir.requested << " iterations\n";
}

}  // namespace trainsim::planner::cli
