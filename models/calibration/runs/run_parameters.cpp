#include "models/calibration/runs/run_parameters.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "models/compute/compute_model.hpp"
#include "models/workload/job/stack.hpp"

namespace trainsim::models::calibration {

using sim::config::Json;

double RunParameter::coordinate(double v) const { return log_scale ? std::log(v) : v; }
double RunParameter::value(double c) const { return std::clamp(log_scale ? std::exp(c) : c, lo, hi); }

namespace {

RunParameter make(std::string name, std::string target, double prior, double sigma, double lo, double hi) {
  RunParameter p;
  p.name = std::move(name);
  p.target = std::move(target);
  p.prior = std::clamp(prior, lo, hi);
  p.sigma = sigma;
  p.lo = lo;
  p.hi = hi;
  return p;
}

double low_precision_efficiency(const hardware::GpuSpec& g, const std::string& precision) {
  if (precision == "mxfp8") return g.mxfp8_gemm_efficiency.value_or(g.fp8_gemm_efficiency);
  if (precision == "nvfp4") return g.nvfp4_gemm_efficiency.value_or(g.fp8_gemm_efficiency);
  return g.fp8_gemm_efficiency;
}

}  // namespace

std::string duration_text(double seconds) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.6gus", seconds * 1e6);
  return buf;
}

std::vector<RunParameter> run_parameters(const std::vector<workload::Job>& jobs) {
  std::vector<RunParameter> out;
  if (jobs.empty()) return out;
  const hardware::GpuSpec g = workload::without_stack_kernels(jobs.front().stack, jobs.front().gpu);
  const auto& c = jobs.front().cluster;
  out.push_back(make("gemm_efficiency", "gpu", g.gemm_efficiency, 0.15, 0.2, 0.98));
  std::set<std::string> precisions;
  for (const auto& j : jobs) precisions.insert(compute::to_string(j.precision));
  for (const char* p : {"fp8", "mxfp8", "nvfp4"}) {
    if (!precisions.contains(p)) continue;
    RunParameter q = make(std::string(p) + "_gemm_efficiency", "gpu", low_precision_efficiency(g, p), 0.15, 0.1, 0.98);
    q.precision = p;
    out.push_back(q);
  }
  out.push_back(make("attention_efficiency", "gpu", g.attention_efficiency, 0.2, 0.05, 0.95));
  out.push_back(make("kernel_launch", "gpu", g.kernel_launch.seconds(), 0.7, 0.5e-6, 500e-6));
  out.push_back(make("hbm_efficiency", "gpu", g.hbm_efficiency, 0.15, 0.3, 0.98));
  out.push_back(make("nvlink_efficiency", "cluster", c.nvlink_efficiency, 0.15, 0.2, 1.0));
  out.push_back(make("nic_efficiency", "cluster", c.nic_efficiency, 0.2, 0.2, 1.0));
  std::set<std::string> stacks;
  for (const auto& j : jobs) {
    if (!stacks.insert(j.stack.name).second) continue;
    const double prior = j.stack.step_overhead.seconds();
    RunParameter o = make("step_overhead", "stack", prior, std::max(0.01, prior), 0.0, 10.0);
    o.log_scale = false;
    o.stack = j.stack.name;
    out.push_back(o);
    // The product with the GPU's efficiency stays below 0.98 of peak.
    RunParameter s = make("kernels.gemm_scale", "stack", j.stack.kernels.gemm_scale, 0.05, 0.3,
                          std::min(2.0, 0.98 / g.gemm_efficiency));
    s.stack = j.stack.name;
    out.push_back(s);
  }
  return out;
}

bool informs(const RunParameter& p, const workload::Job& job) {
  if (p.target == "stack") return p.stack == job.stack.name;
  if (!p.precision.empty()) return compute::to_string(job.precision) == p.precision;
  if (p.name == "nvlink_efficiency") return job.gpus > 1;
  if (p.name == "nic_efficiency") return job.gpus > job.cluster.domain_gpus();
  return true;
}

Json calibration_object(const std::vector<RunParameter>& params, const std::vector<double>& values,
                        const workload::Job& job, const Json& base, const std::string& name) {
  Json cal = base.is_object() ? base : Json::object();
  cal["name"] = name;
  cal["gpu"] = job.gpu.name;
  for (const char* k : {"gpu_overrides", "cluster_overrides", "stack_overrides"})
    if (!cal.contains(k)) cal[k] = Json::object();
  for (size_t i = 0; i < params.size(); ++i) {
    const RunParameter& p = params[i];
    const double v = values[i];
    if (p.target == "stack") {
      cal["stack_overrides"][p.stack][p.name] = p.name == "step_overhead" ? Json(duration_text(v)) : Json(v);
    } else if (p.target == "cluster") {
      cal["cluster_overrides"][p.name] = v;
    } else if (p.name == "kernel_launch") {
      cal["gpu_overrides"][p.name] = duration_text(v);
    } else if (p.name == "attention_efficiency") {
      // Forward and backward move together: the backward keeps its ratio to the forward.
      cal["gpu_overrides"][p.name] = v;
      if (const auto bwd = workload::without_stack_kernels(job.stack, job.gpu).attention_bwd_efficiency)
        cal["gpu_overrides"]["attention_bwd_efficiency"] = std::clamp(*bwd * v / p.prior, 0.05, 1.0);
    } else {
      cal["gpu_overrides"][p.name] = v;
    }
  }
  return cal;
}

}  // namespace trainsim::models::calibration
