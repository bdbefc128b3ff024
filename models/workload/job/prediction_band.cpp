#include "models/workload/job/prediction_band.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "models/workload/job/kernel_sizes.hpp"

namespace trainsim::models::workload {

using sim::config::Json;

namespace {

constexpr double kMinExtrapolatedBand = 0.15;
constexpr double kUncheckedBand = 0.25;

stack::Coverage coverage(const Job& j) {
  stack::Coverage c;
  c.stack = j.stack.name;
  c.precision = compute::to_string(j.precision);
  c.cluster = j.cluster.name;
  c.gpu = j.gpu.name;
  c.gpus = static_cast<double>(j.gpus);
  c.params_b = j.model.parameters() / 1e9;
  c.seq_len = static_cast<double>(j.seq_len);
  c.moe = j.model.moe.has_value();
  return c;
}

// The job's kernel and collective sizes as well, when the evidence holds kernel measurements.
stack::Coverage coverage(const Job& j, const stack::Evidence& e) {
  stack::Coverage c = coverage(j);
  if (!e.gemm_m && !e.gemm_n && !e.gemm_k && !e.message_bytes) return c;
  const KernelSizes k = kernel_sizes(j);
  c.gemm_m = k.gemm_m, c.gemm_n = k.gemm_n, c.gemm_k = k.gemm_k, c.message_bytes = k.message_bytes;
  return c;
}

void widen(PredictionBand& b) {
  b.extrapolated = true;
  b.relative = std::max(2.0 * b.relative, kMinExtrapolatedBand);
}

}  // namespace

stack::Evidence evidence_of(const std::vector<Job>& jobs) {
  std::set<std::string> stacks, precisions, clusters, gpus;
  double gmin = 1e30, gmax = 0, pmin = 1e30, pmax = 0, smin = 1e30, smax = 0;
  bool dense = false, moe = false;
  for (const Job& j : jobs) {
    const stack::Coverage c = coverage(j);
    stacks.insert(c.stack);
    precisions.insert(c.precision);
    clusters.insert(c.cluster);
    gpus.insert(c.gpu);
    gmin = std::min(gmin, c.gpus), gmax = std::max(gmax, c.gpus);
    pmin = std::min(pmin, c.params_b), pmax = std::max(pmax, c.params_b);
    smin = std::min(smin, c.seq_len), smax = std::max(smax, c.seq_len);
    (c.moe ? moe : dense) = true;
  }
  stack::Evidence e;
  if (jobs.empty()) return e;
  auto round3 = [](double x) { return std::round(x * 1000.0) / 1000.0; };
  e.stacks.assign(stacks.begin(), stacks.end());
  e.precisions.assign(precisions.begin(), precisions.end());
  e.clusters.assign(clusters.begin(), clusters.end());
  e.gpu_presets.assign(gpus.begin(), gpus.end());
  e.gpus = std::make_pair(gmin, gmax);
  e.params_b = std::make_pair(round3(pmin), round3(pmax));
  e.seq_len = std::make_pair(smin, smax);
  e.dense = dense;
  e.moe = moe;
  return e;
}

Json PredictionBand::to_json() const {
  return Json{{"relative", std::round(relative * 1e4) / 1e4},
              {"extrapolated", extrapolated},
              {"outside", outside},
              {"basis", basis}};
}

namespace {

// The band of the stack's published runs (no calibration with a band of its own).
PredictionBand stack_band(const Job& j) {
  PredictionBand b;
  const std::vector<stack::StackAccuracy>& entries = j.stack.accuracy;
  if (entries.empty()) {
    b.relative = kUncheckedBand;
    b.extrapolated = true;
    b.basis = "no published runs check stack " + j.stack.name;
    b.outside.push_back("stack " + j.stack.name + " (no accuracy suite)");
    return b;
  }
  const stack::StackAccuracy* best = nullptr;
  std::vector<std::string> best_outside;
  for (const auto& e : entries) {
    std::vector<std::string> o = stack::outside(e.evidence, coverage(j, e.evidence));
    const bool better =
        best == nullptr || o.size() < best_outside.size() || (o.size() == best_outside.size() && e.runs > best->runs);
    if (better) best = &e, best_outside = std::move(o);
  }
  b.relative = best->band;
  b.basis = "stack " + j.stack.name + ": " + best->source + " (" + std::to_string(best->runs) + " runs)";
  b.outside = best_outside;
  if (!b.outside.empty()) widen(b);
  return b;
}

}  // namespace

PredictionBand prediction_band(const Job& j) {
  if (j.calibration && j.calibration->error_band > 0) {
    const auto& cal = *j.calibration;
    PredictionBand b;
    b.relative = cal.error_band;
    b.basis = "calibration " + cal.name + " (" + (cal.error_method.empty() ? "cross-validated" : cal.error_method) +
              ", " + std::to_string(cal.error_runs) + " runs)";
    b.outside = stack::outside(cal.evidence, coverage(j, cal.evidence));
    if (!b.outside.empty()) widen(b);
    return b;
  }
  PredictionBand b = stack_band(j);
  if (j.calibration) {
    // A calibration fitted to kernel measurements (validate, kineto) has no band of its own, but its
    // constants hold only for what it measured: the rest of the job runs on the presets' values.
    const auto& cal = *j.calibration;
    b.basis += "; calibration " + cal.name + " carries no cross-validated error";
    const std::vector<std::string> o = stack::outside(cal.evidence, coverage(j, cal.evidence));
    for (const std::string& x : o) b.outside.push_back("calibration " + cal.name + ": " + x);
    if (!o.empty() && !b.extrapolated) widen(b);
  }
  return b;
}

}  // namespace trainsim::models::workload
