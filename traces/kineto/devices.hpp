#pragma once
// CUDA device names (cudaDeviceProp::name, what a Kineto trace's deviceProperties hold) and
// trainsim's GPU presets, both ways: calibrate and compare find the preset a trace ran on, export
// writes the name a real trace of that GPU would carry.

#include <cstdint>
#include <string>

namespace trainsim::traces {

// The GPU preset for a device name and memory (bytes; 0 when unknown), or "" when none matches.
// A100s are told apart by memory (the 40 GB and 80 GB parts share a name prefix).
std::string gpu_preset_for_device(const std::string& device_name, int64_t memory_bytes);
// The device name a preset's GPU reports, or the preset name itself for a GPU with no CUDA name
// known here (a GPU file, a future part).
std::string device_name_for_preset(const std::string& preset);

}  // namespace trainsim::traces
