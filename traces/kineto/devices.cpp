#include "traces/kineto/devices.hpp"

namespace trainsim::traces {

namespace {
struct Device {
  const char* preset;
  const char* name;       // what cudaGetDeviceProperties reports on that part
  const char* marker;     // substring that identifies the part in a device name
  double min_memory_gib;  // the part's smallest memory (tells A100 40 GB from 80 GB)
};
// Names as the CUDA driver reports them (nvidia-smi --query-gpu=name prints the same strings).
constexpr Device kDevices[] = {
    {"h100-sxm-80gb", "NVIDIA H100 80GB HBM3", "H100", 0.0},
    {"h200-sxm-141gb", "NVIDIA H200", "H200", 0.0},
    // The Grace superchips' GPUs before B200/B300: "NVIDIA GB200" contains "B200".
    {"gb200", "NVIDIA GB200", "GB200", 0.0},
    {"gb300", "NVIDIA GB300", "GB300", 0.0},
    {"b300", "NVIDIA B300 SXM6 AC", "B300", 0.0},
    {"b200", "NVIDIA B200", "B200", 0.0},
    {"a100-sxm-80gb", "NVIDIA A100-SXM4-80GB", "A100", 60.0},
    {"a100-sxm-40gb", "NVIDIA A100-SXM4-40GB", "A100", 0.0},
};
}  // namespace

std::string gpu_preset_for_device(const std::string& device_name, int64_t memory_bytes) {
  const double gib = static_cast<double>(memory_bytes) / (1024.0 * 1024.0 * 1024.0);
  for (const Device& d : kDevices) {
    if (device_name == d.name) return d.preset;
    if (device_name.find(d.marker) == std::string::npos) continue;
    // A name with the marker but not the exact string: memory decides when it is known, and an
    // unknown memory picks the first (larger) part.
    if (memory_bytes <= 0 || gib >= d.min_memory_gib) return d.preset;
  }
  return "";
}

std::string device_name_for_preset(const std::string& preset) {
  for (const Device& d : kDevices)
    if (preset == d.preset) return d.name;
  return preset;
}

}  // namespace trainsim::traces
