// A torchtitan-style Llama 3 training step measured on one NVIDIA H200 (PyTorch 2.11, CUDA 13.0,
// cuDNN 9.19; 2026-11-28), committed as tests/accuracy/data/h200_torch_native_step.json with the
// script that took it (validator/scripts/torch_native_step.py): the Llama 3.1 8B shape with 2 or
// 6 layers, micro-batch 2 x 8,192 tokens, FSDP2 on a world of one, fused AdamW; eager or with
// each block compiled; no, selective (torchtitan's per-op policy) or full activation
// checkpointing; SDPA's default backend (cuDNN's fused attention in PyTorch 2.11) or
// FlashAttention-2. Each row is the median of 8 steps (spread under 3%).
//
// trainsim simulates each as the torchtitan stack would run it on one GPU of dgx-h200. The stack
// prices SDPA as FlashAttention-2 (the PyTorch 2.5-2.7 backend of its dev rows), so the FA2 rows
// are its own and the cuDNN rows show what the newer backend buys. docs/validator.md, "A
// PyTorch-native step on the H200", has the table and what it says about the torchtitan rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "accuracy_common.hpp"
#include "models/presets/catalog.hpp"

namespace trainsim::accuracy {
namespace {

struct Expect {
  int layers;
  bool compile;
  const char* ac;
  const char* sdpa;
  double seen;         // signed error of the predicted step time, seen on 2026-11-28
  double memory_seen;  // and of the predicted peak (reserved) memory
};

TEST(TorchNativeH200, OneGpuStepOfTheTorchtitanLlama) {
  const std::string path = std::string(TRAINSIM_ACCURACY_DATA_DIR) + "/h200_torch_native_step.json";
  const Json data = models::presets::load_json_file(path, path);
  // Memory: the peak PyTorch reserved (the gathered LM head at the logits' peak counted since
  // 2026-11-29: each row +1.0 GiB, 1-2 points closer). Allocated is within 3-5% (79.4 GiB measured, 77.0 predicted
  // at 6 layers eager); the caching allocator then holds 19-35% more than it allocated
  // (reserved / allocated 1.19 with selective AC, 1.23-1.26 without, 1.35 with full AC) where the
  // stack's fragmentation reserve is 5%.
  // Negative: the prediction is faster than the GPU was (optimistic). The FA2 rows are the
  // stack's own backend: -3.5% and -3.8% (-7.7% before the eager loss was priced as PyTorch runs
  // it and FSDP2's copy-out was), a third of the tokens/s optimism of the torchtitan H100 dev rows
  // (torchtitan_test.cpp): the rest is not in one GPU's kernels. Full AC: +4.3% with PyTorch's
  // early stop (the recompute redoes 6 forward GEMMs a layer, not w2: kernel counts in the data),
  // +7.7% without; its recompute measured 10.8 ms a layer, priced 13.8 (attention as FA2).
  const Expect expected[] = {
      {2, false, "none", "default", -0.018, -0.117}, {6, false, "none", "default", 0.009, -0.175},
      {2, true, "none", "default", -0.003, -0.085},  {6, true, "none", "default", 0.021, -0.119},
      {6, false, "none", "flash", -0.035, -0.124},   {6, false, "selective", "default", 0.03, 0.024},
      {6, false, "full", "default", 0.043, -0.053},  {6, false, "selective", "flash", -0.038, 0.024},
  };
  std::printf("%-7s %-8s %-10s %-8s %12s %12s %8s %13s %13s %8s\n", "layers", "compile", "AC", "SDPA", "measured ms",
              "trainsim ms", "error", "measured GiB", "trainsim GiB", "error");
  size_t i = 0;
  for (const Json& r : data.at("runs")) {
    ASSERT_LT(i, std::size(expected));
    const Expect& e = expected[i++];
    ASSERT_EQ(r.at("layers").get<int>(), e.layers);
    ASSERT_EQ(r.at("compile").get<bool>(), e.compile);
    ASSERT_EQ(r.at("ac").get<std::string>(), e.ac);
    ASSERT_EQ(r.at("sdpa").get<std::string>(), e.sdpa);
    Json model = models::presets::find("models", "llama3-8b", "model");
    model["layers"] = e.layers;
    Json job{{"stack", "torchtitan"}, {"model", model},    {"cluster", "dgx-h200"}, {"gpus", 1},
             {"micro_batch", 2},      {"global_batch", 2}, {"seq_len", 8192},       {"recompute", e.ac}};
    if (e.compile) {
      job["torch_compile"] = true;
      job["compile_loss"] = false;  // the script compiles each block, not the loss
    }
    const auto result = run(job);
    ASSERT_TRUE(result.has_value()) << "does not fit";
    const double measured = r.at("step_s_median").get<double>();
    const double predicted = result->iteration.seconds();
    const double error = predicted / measured - 1;
    const double peak = r.at("peak_reserved_gib").get<double>(), peak_predicted = result->peak_memory().gib();
    const double memory_error = peak_predicted / peak - 1;
    std::printf("%-7d %-8s %-10s %-8s %12.1f %12.1f %+7.1f%% %13.1f %13.1f %+7.1f%%\n", e.layers,
                e.compile ? "yes" : "no", e.ac, e.sdpa, measured * 1e3, predicted * 1e3, 100 * error, peak,
                peak_predicted, 100 * memory_error);
    EXPECT_NEAR(memory_error, e.memory_seen, 0.005) << e.layers << " layers, " << e.ac << ", " << e.sdpa;
    EXPECT_LT(std::abs(memory_error), 0.25);
    EXPECT_NEAR(error, e.seen, 0.005) << e.layers << " layers, " << e.ac << ", " << e.sdpa;
    EXPECT_LT(std::abs(error), 0.10);
  }
  EXPECT_EQ(i, std::size(expected));
}

}  // namespace
}  // namespace trainsim::accuracy
