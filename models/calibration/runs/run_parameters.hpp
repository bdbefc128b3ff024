#pragma once
// The end-to-end constants `trainsim calibrate` can fit from logged runs, with their priors (the
// presets' values the runs resolve to), prior widths and bounds, and how a set of values becomes
// a calibration object a job takes (models/hardware/calibration.hpp).
//
//   target   constant                      coordinate  prior width  what it scales
//   gpu      gemm_efficiency               log         0.15         16-bit GEMMs
//   gpu      fp8/mxfp8/nvfp4_gemm_efficiency log       0.15         GEMMs of that precision (runs using it)
//   gpu      attention_efficiency          log         0.20         fused attention, forward and backward
//   gpu      kernel_launch                 log         0.70         per-kernel overhead (every micro-batch)
//   gpu      hbm_efficiency                log         0.15         memory-bound kernels (norms, activations,
//                                                                   optimizer, casts: the HBM bandwidth they reach)
//   cluster  nvlink_efficiency             log         0.15         collectives inside the NVLink domain
//   cluster  nic_efficiency                log         0.20         collectives across nodes (runs past one domain)
//   stack    step_overhead                 linear      max(10 ms, prior)  host time per iteration
//   stack    kernels.gemm_scale            log         0.05         the stack's GEMMs vs the GPU's (several stacks)
//
// The widths are in the coordinate (log: relative). The hardware constants are wider than the
// stack's kernel scale, so evidence from one stack moves the hardware (which the next stack on the
// same GPUs keeps) and only a difference between stacks moves a stack's scale.

#include <string>
#include <vector>

#include "models/workload/job/job.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::models::calibration {

struct RunParameter {
  std::string name;    // the field ("gemm_efficiency", "step_overhead", "kernels.gemm_scale")
  std::string target;  // gpu | cluster | stack
  std::string stack;   // the stack, for target stack
  bool log_scale = true;
  double prior = 0.0;         // value
  double sigma = 0.1;         // prior width in the coordinate
  double lo = 0.0, hi = 1.0;  // bounds on the value
  std::string precision;      // GEMM efficiencies of one precision: the runs it applies to ("" = all)

  std::string label() const { return target == "stack" ? stack + "." + name : name; }
  double coordinate(double value) const;
  double value(double coordinate) const;
};

// The constants the runs' jobs could inform: GPU and cluster ones from the (single) GPU and
// cluster, stack ones per stack used. `jobs` are resolved jobs, one per run.
std::vector<RunParameter> run_parameters(const std::vector<workload::Job>& jobs);

// Whether `p` can change run `job`'s time at all (its precision, a link it crosses, its stack).
bool informs(const RunParameter& p, const workload::Job& job);

// "12.5us": a duration as the GPU and stack schemas read it.
std::string duration_text(double seconds);

// A calibration object (as a job's `calibration` key takes) setting each parameter to its value.
// `base` (a calibration object, or null) is kept under it: its other overrides stay.
sim::config::Json calibration_object(const std::vector<RunParameter>& params, const std::vector<double>& values,
                                     const workload::Job& job, const sim::config::Json& base, const std::string& name);

}  // namespace trainsim::models::calibration
