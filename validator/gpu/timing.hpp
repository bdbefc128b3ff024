#pragma once
// Device-side timing: CUDA events around each repetition after warm-up; the median is reported.

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "models/calibration/measurement.hpp"
#include "validator/gpu/check.hpp"

namespace trainsim::validator::gpu {

namespace calibration = models::calibration;

class EventTimer {
 public:
  EventTimer() {
    TRAINSIM_CUDA(cudaEventCreate(&a_));
    TRAINSIM_CUDA(cudaEventCreate(&b_));
  }
  ~EventTimer() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  // Seconds taken by `work` (which enqueues on `s`), measured on the device.
  double time(cudaStream_t s, const std::function<void(int)>& work, int rep) {
    TRAINSIM_CUDA(cudaEventRecord(a_, s));
    work(rep);
    TRAINSIM_CUDA(cudaEventRecord(b_, s));
    TRAINSIM_CUDA(cudaEventSynchronize(b_));
    float ms = 0.0f;
    TRAINSIM_CUDA(cudaEventElapsedTime(&ms, a_, b_));
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  cudaEvent_t a_{}, b_{};
};

// Median seconds of `reps` timed runs of `work(rep)` after `warmup` untimed ones.
inline double median_time(cudaStream_t s, int warmup, int reps, const std::function<void(int)>& work) {
  EventTimer t;
  for (int i = 0; i < warmup; ++i) work(i);
  std::vector<double> times;
  times.reserve(static_cast<size_t>(reps));
  for (int i = 0; i < reps; ++i) times.push_back(t.time(s, work, warmup + i));
  return calibration::median(std::move(times));
}

}  // namespace trainsim::validator::gpu
