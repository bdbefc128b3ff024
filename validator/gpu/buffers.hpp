#pragma once
// Device memory owned by RAII handles, filled with random non-zero values (never zeros: they hide
// unwritten outputs and can run faster than real data).

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace trainsim::validator::gpu {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

// Fills `count` bf16 values with uniform random numbers in [-scale, -scale/16] U [scale/16, scale]
// (never zero), or fp32 values likewise, from a counter-based hash of (seed, index).
void fill_bf16(void* p, size_t count, float scale, uint64_t seed, cudaStream_t s);
void fill_f32(void* p, size_t count, float scale, uint64_t seed, cudaStream_t s);
void fill_bytes(void* p, size_t bytes, uint64_t seed, cudaStream_t s);  // random fp8-safe bytes (finite e4m3)
// A one-thread kernel that occupies its stream for `seconds` of device time (the replay's ops
// without FLOPs).
void launch_wait(double seconds, cudaStream_t s);
// An empty kernel, to measure the launch cost.
void launch_empty(cudaStream_t s);

}  // namespace trainsim::validator::gpu
