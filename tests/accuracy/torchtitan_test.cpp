// torchtitan runs, as recorded in ../shared/data/published_dev_2026.json: Llama 3.1 8B with FSDP2
// on 8 and 128 H100s (Dec 2024; eager, torch.compile, torch.compile + float8), Llama 3.1 8B on 32
// and 64 H200s (2025, compile + float8 with FSDP float8 all-gather), and Llama 2 / 3 on 64 A100s
// (April 2024, FSDP2, no / selective / full activation checkpointing). Tokens/s per GPU, and the
// peak memory torchtitan logs (the caching allocator's reserved peak) where the row has it.
//
// Mapping (what the rows say, and what trainsim assumes where they are silent):
// - stack `torchtitan` (FSDP2 = ZeRO-3 over all ranks, fp32 gradient reduction, SDPA with the
//   FlashAttention-2 backend); cluster: the Dec 2024 H100s are Meta Grand Teton boards, `dgx-h100`
//   with `--gpu h100-sxm-96gb` (96 GB HBM2e at a 500 W cap); H200 `dgx-h200`; A100 `dgx-a100`.
// - activation checkpointing: "selective" and "selective (op)" are torchtitan's op-level policy
//   (`--recompute selective` on this stack); "selective (layer)" is its layer policy with
//   ac_freq 2 (every second layer fully recomputed): `--recompute full --recompute-layers L/2`.
// - float8: torchao Float8Linear with tensorwise dynamic scaling -> `--precision fp8`; the FSDP
//   float8 all-gather where the row says so (`fp8_param_gather`).
// - torch.compile: `torch_compile` where the row sets it (the element-wise ops fused); the eager
//   rows run torchtitan's model op by op (llm/eager_ops.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "accuracy_common.hpp"
#include "models/presets/catalog.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/run/simulate.hpp"
#include "summary.hpp"

namespace trainsim::accuracy {
namespace {

Json torchtitan_job(const Json& rec) {
  const Json& p = rec.at("parallel");
  const std::string gpu = rec.at("cluster").at("gpu").get<std::string>();
  static const std::map<std::string, std::string> presets{{"Llama 3.1 8B", "llama3-8b"},
                                                          {"Llama 3 8B", "llama3-8b"},
                                                          {"Llama 3 70B", "llama3-70b"},
                                                          {"Llama 2 13B", "llama2-13b"},
                                                          {"Llama 2 70B", "llama2-70b"}};
  Json model = models::presets::find("models", presets.at(rec.at("model").at("name").get<std::string>()), "model");
  model["seq_len"] = rec.at("model").at("seq_len");
  Json job{{"stack", "torchtitan"},
           {"model", model},
           {"gpus", rec.at("cluster").at("gpus")},
           {"micro_batch", p.at("micro_batch")},
           {"global_batch", p.at("global_batch")}};
  if (starts_with(gpu, "H100")) {
    job["cluster"] = "dgx-h100";
    job["gpu"] = "h100-sxm-96gb";
  } else if (starts_with(gpu, "H200")) {
    job["cluster"] = "dgx-h200";
  } else {
    job["cluster"] = "dgx-a100";
  }
  const std::string ac = p.at("recompute").get<std::string>();
  if (ac == "selective (layer)") {
    job["recompute"] = "full";
    job["recompute_layers"] = model.at("layers").get<int64_t>() / 2;
  } else if (starts_with(ac, "selective")) {
    job["recompute"] = "selective";
  } else {
    job["recompute"] = ac;  // none | full
  }
  if (p.value("torch_compile", false)) {
    job["torch_compile"] = true;
    // torchtitan of 2024 compiled the blocks only: at the Dec 2024 benchmark commit 9dec370,
    // train.py's `loss_fn = torch.compile(loss_fn)` is commented out ("compiling loss function
    // causes CUDA errors"); from 2025 the loss is compiled with the model.
    if (starts_with(rec.at("id").get<std::string>(), "torchtitan_2024")) job["compile_loss"] = false;
  }
  if (p.value("float8", false)) {
    job["precision"] = "fp8";
    if (rec.value("notes", "").find("FSDP float8 all-gather") != std::string::npos) job["fp8_param_gather"] = true;
  }
  return job;
}

TEST(Torchtitan, TokensPerGpuAndPeakMemory) {
  const auto data = load_shared("published_dev_2026.json");
  if (!data) GTEST_SKIP() << "../shared/data/published_dev_2026.json not present";
  std::vector<Row> rows, memory;
  for (const auto& rec : *data) {
    if (rec.value("framework", "").find("torchtitan") == std::string::npos) continue;
    const Json job = torchtitan_job(rec);
    const auto j = models::workload::resolve_job(models::workload::parse_job(job));
    const auto r = models::workload::simulate(j);
    Row row;
    row.id = rec.at("id").get<std::string>();
    row.job = job;
    row.measured = rec.at("measured").at("tokens_per_s_per_gpu").get<double>();
    row.fits = r.fits;
    if (r.fits) row.predicted = r.tokens_per_s / static_cast<double>(j.gpus);
    row.config = cat(models::compute::to_string(j.precision), " g", j.gpus, " mb", j.micro_batch, " ",
                     models::workload::to_string(j.recompute),
                     j.recompute == models::workload::Recompute::kFull ? cat("/", j.recompute_layers) : std::string());
    rows.push_back(row);
    const Json& measured = rec.at("measured");
    if (measured.contains("peak_memory_gib") && !measured.at("peak_memory_gib").is_null()) {
      Row m = row;
      m.measured = measured.at("peak_memory_gib").get<double>();
      m.predicted = r.peak_memory().gib();
      m.fits = true;
      m.config = cat(row.config, " budget ", r.capacity.gib());
      memory.push_back(m);
    }
  }
  ASSERT_EQ(rows.size(), 16u);
  ASSERT_EQ(memory.size(), 8u);
  print_table("torchtitan (FSDP2), tokens/s per GPU", rows, "tokens/s");
  print_table("torchtitan (FSDP2), peak memory (reserved), GiB", memory, "GiB");
  const Stats s = stats(rows), mem = stats(memory);
  expect_summary("torchtitan_tokens", s);
  expect_summary("torchtitan_memory", mem);
  // Observed 2026-11-28 (issue 33). Before: selective recompute on this stack kept every tensor
  // (Megatron's attention-core policy is a no-op with fused attention) and the model's element-wise
  // ops were priced as fused kernels: 4 of 16 rejected on memory (the 8-GPU Llama 3.1 8B rows at
  // 103 GiB of 96), tokens/s median 26.1%, peaks +25% to +87%. After PyTorch's op-level selective
  // checkpointing (recompute_modules `ops`) and eager element-wise ops unless torch_compile: 16 of
  // 16 fit, tokens/s median 15.6% (every row optimistic: A100 +4% to +19%, compiled H100 / H200
  // +16% to +23%); with the eager loss's fp32 working set (eager_logits_bytes) peaks -22% to +6%,
  // median 13.3% (the 2025 H200 rows within 6%, the Dec 2024 eager rows -8% and -10%, the Dec 2024
  // compile rows 17-22% under: that release compiled the model but not its loss, where the 2025
  // stack's torch_compile compiles both). Then (the same day, from a step measured on an H200,
  // docs/validator.md): the Dec 2024 compile rows set compile_loss false (peaks median 3.1%, max
  // 9.7%: target met), the eager loss moves 48 bytes a logit and FSDP2 copies each gather out:
  // tokens/s median 13.9%, max 18.4%. The tokens/s target is NOT met; the bounds guard the state.
  // 2026-11-29: the LM head's gathered weights at the logits' peak (footprint.cpp): peaks median
  // 3.4%, max 8.2%, signed -0.1% (was -1.6%).
  EXPECT_EQ(s.not_fitting, 0u);
  EXPECT_LE(s.median_abs, 0.14);
  EXPECT_LE(mem.max_abs, 0.10);
  // The stack's accuracy entries, one per GPU (the band simulate and plan print).
  for (const char* cluster : {"dgx-a100", "dgx-h100", "dgx-h200"}) {
    std::vector<Row> on;
    for (const auto& r : rows)
      if (r.job.at("cluster") == cluster) on.push_back(r);
    expect_stack_accuracy("torchtitan", cat("tests/accuracy/torchtitan_test.cpp ", cluster), on);
    // Issue 34: calibrated per GPU on these rows (leave-one-out); the A100 source has 8 rows.
    const CalibrationStats c =
        calibrate_rows(cat("torchtitan on ", cluster), on, models::calibration::RunMetric::kTokensPerGpu, 1.0, &memory);
    if (on.size() >= 8) {
      EXPECT_LE(c.cv, 0.05);
    }
    // The allocator's reserve fitted to the logged peaks, kept where leaving one out does not beat
    // the presets (H100: 0.7% before, kept since the gathered LM head is counted; H200 7.1% -> 2.4%
    // leave-one-out, 2026-11-29): calibrating never leaves the peaks worse than the presets.
    if (c.peak_runs >= 2) {
      EXPECT_LE(c.peak_after, c.peak_before + 1e-9);
      EXPECT_LE(c.peak_cv, 0.03);
    }
  }
  // The source's own memory statement: Llama 2 70B at local batch 2 with selective checkpointing
  // runs out of memory on 80 GB A100s (the batch-1 row is the one that ran).
  Json oom = torchtitan_job(*std::find_if(data->begin(), data->end(), [](const Json& r) {
    return r.at("id") == "torchtitan_202404_a100_64gpu_llama2_70b_bs1_sel_op";
  }));
  oom["micro_batch"] = 2;
  oom["global_batch"] = 128;
  EXPECT_FALSE(models::workload::simulate(models::workload::resolve_job(models::workload::parse_job(oom))).fits);
}

}  // namespace
}  // namespace trainsim::accuracy
