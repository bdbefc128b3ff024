// The validator's runner in a build without CUDA: every request to measure says why it cannot.
#include "validator/replay/gpu_backend.hpp"
#include "validator/runner.hpp"

namespace trainsim::validator {

namespace calibration = models::calibration;

calibration::MeasurementSet measure(const models::workload::Job&, const MeasureOptions&, std::ostream*) {
  throw NoGpuError(
      "this trainsim was built without CUDA, so it cannot measure a GPU (rebuild on a machine with nvcc, cuBLASLt "
      "and NCCL under /usr/local/cuda, or fit saved results with `trainsim validate --measurements FILE`)");
}

std::unique_ptr<replay::Backend> replay::make_gpu_backend(const models::workload::Job&, double) {
  throw NoGpuError(
      "this trainsim was built without CUDA, so it cannot replay on GPUs (use --backend cpu, or rebuild on a "
      "machine with nvcc and NCCL under /usr/local/cuda)");
}

}  // namespace trainsim::validator
