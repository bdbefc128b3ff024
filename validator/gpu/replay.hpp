#pragma once
// Replay of one decoder-layer shard on this GPU: exactly the kernels the simulator prices
// (models/llm/layer_kernels.hpp), in the order one rank runs them for a micro-batch (attention and
// MLP forward, then MLP and attention backward), with cuBLASLt GEMMs and kernels/ for the rest,
// on random data. Each kernel is timed between device events, and the whole layer end to end.
// The caller (measure() in runner.cpp) has checked the job: flash attention, head dim 64 or 128.

#include <string>
#include <vector>

#include "models/calibration/measurement.hpp"
#include "models/llm/layer_kernels.hpp"
#include "models/workload/job.hpp"

#include <cuda_runtime.h>

namespace trainsim::validator::gpu {

namespace calibration = models::calibration;

struct ReplayResult {
  std::vector<calibration::Measurement> ops;  // one per kernel of the sequence (median over repetitions)
  calibration::Measurement layer;             // the whole sequence, first launch to last completion
  std::string scope;                          // what was replayed, in words (a scaled-down plan says so)
};

// One GPU's whole training iteration, replayed: for every micro-batch the embedding, every
// layer's forward, the LM head with its fused loss, every layer's backward in reverse, the
// embedding's backward; then the AdamW step over every parameter. For plans of one GPU per model
// replica (tp = pp = 1; with dp > 1 the gradient all-reduce is left out), flash attention and no
// recompute. `scope` receives what was replayed, in words.
calibration::Measurement replay_iteration(const models::workload::Job& job, cudaStream_t s, int warmup, int reps,
                                          std::string* scope);

ReplayResult replay_layer(const models::workload::Job& job, const models::llm::LayerKernels& lk, cudaStream_t s,
                          int warmup, int reps);

}  // namespace trainsim::validator::gpu
