#pragma once
// Helpers shared by the models unit tests: presets and jobs from JSON.
#include "models/hardware/cluster_spec.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "models/llm/model_spec.hpp"
#include "models/workload/job.hpp"

namespace trainsim::models::testing {

llm::ModelSpec model(const std::string& preset);
hardware::GpuSpec gpu(const std::string& preset);
hardware::ClusterSpec cluster(const std::string& preset);
workload::Job job(const sim::config::Json& j);
// A GPT-style model object (GeLU, LayerNorm, learned positions, biases, dropout).
sim::config::Json gpt(int64_t layers, int64_t hidden, int64_t heads, int64_t vocab, int64_t seq);

}  // namespace trainsim::models::testing
