// The validator's runner in a build without CUDA: every request to measure says why it cannot.
#include "validator/runner.hpp"

namespace trainsim::validator {

namespace calibration = models::calibration;

calibration::MeasurementSet measure(const models::workload::Job&, const MeasureOptions&, std::ostream*) {
  throw NoGpuError(
      "this trainsim was built without CUDA, so it cannot measure a GPU (rebuild on a machine with nvcc, cuBLASLt "
      "and NCCL under /usr/local/cuda, or fit saved results with `trainsim validate --measurements FILE`)");
}

}  // namespace trainsim::validator
