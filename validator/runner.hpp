#pragma once
// Measuring on this machine's GPU(s): the microbenchmarks of the plan's kernels, its NCCL
// collectives, and the replay of its layer on real kernels. Implemented by gpu/runner.cpp when
// trainsim is built with CUDA, and by no_gpu.cpp (which always throws NoGpuError) otherwise.

#include <ostream>
#include <stdexcept>
#include <string>

#include "models/calibration/measurement.hpp"
#include "models/workload/job.hpp"

namespace trainsim::validator {

namespace calibration = models::calibration;

// No usable GPU (none present, no driver, or a build without CUDA): `trainsim validate` exits 4.
class NoGpuError : public std::runtime_error {
 public:
  explicit NoGpuError(const std::string& why) : std::runtime_error(why) {}
};

struct MeasureOptions {
  int warmup = 5;           // untimed repetitions before timing
  int reps = 30;            // timed repetitions; medians are reported
  int gemm_algorithms = 8;  // cuBLASLt heuristic candidates timed per GEMM shape (best_s)
  bool fp8 = true;          // also time the forward GEMMs in FP8 where the GPU has FP8 tensor cores
  std::string command;      // the command line, for provenance
};

// Runs every measurement for `job` (shapes per TP rank, one micro-batch) and returns them, with
// provenance. Prints one progress line per phase to `log` when not null. Throws NoGpuError.
calibration::MeasurementSet measure(const models::workload::Job& job, const MeasureOptions& opt, std::ostream* log);

}  // namespace trainsim::validator
