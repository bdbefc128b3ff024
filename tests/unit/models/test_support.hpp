#pragma once
// Helpers shared by the models unit tests: presets and jobs from JSON, and error capture.
#include <string>
#include <utility>

#include "models/hardware/cluster_spec.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "models/llm/model_spec.hpp"
#include "models/workload/job/job.hpp"
#include "sim/error.hpp"

namespace trainsim::models::testing {

llm::ModelSpec model(const std::string& preset);
// A preset's JSON (to edit before parsing).
sim::config::Json model_json(const std::string& preset);
hardware::GpuSpec gpu(const std::string& preset);
hardware::ClusterSpec cluster(const std::string& preset);
workload::Job job(const sim::config::Json& j);
// A GPT-style model object (GeLU, LayerNorm, learned positions, biases, dropout).
sim::config::Json gpt(int64_t layers, int64_t hidden, int64_t heads, int64_t vocab, int64_t seq);
// DeepSeek-V3's features in miniature (4 layers, h 1024): MLA, a dense layer then MoE layers of
// 8 experts top-2 with a shared expert, and `mtp_layers` MTP modules.
sim::config::Json mini_deepseek(int64_t seq, int64_t mtp_layers);
// `base` with the keys of `extra` set over it.
sim::config::Json with(sim::config::Json base, const sim::config::Json& extra);
// An inline H100 cluster whose network is (almost) free: 10^6 TB/s links, zero latencies and
// zero collective launch, so that simulated times are compute only.
sim::config::Json ideal_cluster();

// The one-line message of the ConfigError `f` throws, or "" when it throws nothing.
template <typename F>
std::string config_error(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace trainsim::models::testing
