// Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
// Megatron-LM", SC'21 (arXiv:2104.04473), Tables 1 and 2, as recorded in
// ../shared/data/published_dev.json. Cluster: NVIDIA Selene (DGX A100 80GB, 8x HDR per node).
//
// FLOP accounting: the paper's Eq. 3, F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)), counts the
// recomputed forward pass, so measured TFLOP/s are compared with Eq. 3 over trainsim's
// predicted iteration time (not with trainsim's MFU).
//
// The 2021 software stack: fp16 mixed precision, unfused attention (fused scale-mask-softmax,
// no FlashAttention), no sequence parallelism, full recomputation, pipeline sends split across
// the TP ranks (scatter/gather, Sec 4.1), data-parallel all-reduce after the pipeline flush (no
// overlap with backward in 2021 Megatron), and blocking pipeline sends (2021 Megatron's
// p2p_communication called torch.cuda.synchronize() after every batch_isend_irecv).
//
// Unknown knobs: Table 1 gives neither the micro-batch size nor the number of interleaved
// chunks; the authors tuned them per row. trainsim does what they did: it tries micro-batch
// 1/2/4/8 and 1..8 chunks (interleaved when > 1) and keeps the fastest that fits in memory.
//
// Target (foundation issue): median |error| <= 5% and max <= 15% on Table 1.
// Observed: see the bounds below; they pin today's errors so a regression cannot pass silently.
#include <gtest/gtest.h>

#include <cmath>

#include "accuracy_common.hpp"
#include "summary.hpp"

namespace trainsim::accuracy {
namespace {

double eq3_flops(const Json& m, double batch) {
  const double l = m.at("layers").get<double>(), h = m.at("hidden").get<double>();
  const double V = m.at("vocab").get<double>(), s = m.at("seq_len").get<double>();
  return 96.0 * batch * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

// The stack `megatron-lm-2021` sets the knobs above as its defaults (fp16, unfused attention, no
// SP, full recompute, scatter/gather, gradient all-reduce after the flush, blocking sends).
Json stack_2021() { return Json{{"cluster", "dgx-a100"}, {"stack", "megatron-lm-2021"}}; }

// Fastest fitting (micro-batch, chunks) for a PTD-P row; returns predicted iteration seconds.
std::optional<double> best_ptdp(Json job, const std::vector<int>& micro_batches, std::string& chosen,
                                Json* best_job = nullptr) {
  std::optional<double> best;
  const int layers = job.at("layers_hint").get<int>();
  job.erase("layers_hint");
  const int pp = job.at("pp").get<int>();
  const int64_t gpus = job.at("gpus").get<int64_t>();
  const int64_t dp = gpus / (job.at("tp").get<int64_t>() * pp);
  for (int mb : micro_batches) {
    if (job.at("global_batch").get<int64_t>() % (dp * mb) != 0) continue;
    const int64_t micro = job.at("global_batch").get<int64_t>() / (dp * mb);
    for (int vp = 1; vp <= 8; ++vp) {
      if (layers % (pp * vp) != 0) continue;
      if (vp > 1 && (pp == 1 || micro % pp != 0)) continue;
      Json j = job;
      j["micro_batch"] = mb;
      j["vp"] = vp;
      j["schedule"] = vp > 1 ? "interleaved" : "1f1b";
      const auto r = run(j);
      if (!r) continue;
      const double t = r->iteration.seconds();
      if (!best || t < *best) {
        best = t;
        chosen = cat("mb", mb, " vp", vp);
        if (best_job != nullptr) *best_job = j;
      }
    }
  }
  return best;
}

TEST(Narayanan21, Table1WeakScaling) {
  const auto data = load_shared("published_dev.json");
  if (!data) GTEST_SKIP() << "../shared/data/published_dev.json not present";
  std::vector<Row> rows, times;
  for (const auto& rec : *data) {
    if (rec.at("id").get<std::string>().rfind("narayanan21_t1_", 0) != 0) continue;
    const Json& m = rec.at("model");
    const Json& p = rec.at("parallel");
    Json job = stack_2021();
    job["model"] = preset_for(m);
    job["gpus"] = rec.at("cluster").at("gpus");
    job["tp"] = p.at("tp");
    job["pp"] = p.at("pp");
    job["global_batch"] = p.at("global_batch");
    job["layers_hint"] = m.at("layers");
    std::string chosen;
    Json best_job;
    const auto t = best_ptdp(job, {1, 2, 4, 8}, chosen, &best_job);
    Row row;
    row.id = rec.at("id").get<std::string>();
    row.job = best_job;
    row.config = cat("g", rec.at("cluster").at("gpus").get<int>(), " t", p.at("tp").get<int>(), " p",
                     p.at("pp").get<int>(), " ", chosen);
    row.measured = rec.at("measured").at("tflops_per_gpu").get<double>();
    row.fits = t.has_value();
    if (t)
      row.predicted =
          eq3_flops(m, p.at("global_batch").get<double>()) / *t / rec.at("cluster").at("gpus").get<double>() / 1e12;
    rows.push_back(row);
    // The same row as an iteration time (Eq. 3 FLOPs over the measured rate), for calibration.
    Row timed = row;
    timed.measured = eq3_flops(m, p.at("global_batch").get<double>()) /
                     (row.measured * 1e12 * rec.at("cluster").at("gpus").get<double>());
    times.push_back(timed);
  }
  ASSERT_EQ(rows.size(), 10u);
  print_table("Narayanan et al. SC'21 Table 1 (TFLOP/s per GPU, Eq. 3)", rows, "TFLOP/s");
  const Stats s = stats(rows);
  expect_summary("narayanan_t1", s);
  EXPECT_EQ(s.not_fitting, 0u);
  // Observed 2026-11-26 under the megatron-lm-2021 stack: median 1.2%, max 5.7%, signed median
  // +0.8%. Before stacks (2026-11-22) every row was 7-16% optimistic, the 1.7B row without model
  // parallelism included: the 2021 kernels were slower than the 2024 GEMM rates the A100 preset
  // carries. The stack's 16-bit GEMM scale (0.90) is fitted on this table (docs/stacks.md).
  // Target 5% / 15%: met.
  EXPECT_LE(s.median_abs, 0.05);
  EXPECT_LE(s.max_abs, 0.07);
  expect_stack_accuracy("megatron-lm-2021", "tests/accuracy/narayanan21_test.cpp Table1", rows);
  // Issue 34: calibrated on these rows (leave-one-out).
  const CalibrationStats c = calibrate_rows("Narayanan Table 1", times, models::calibration::RunMetric::kIterationTime);
  EXPECT_LE(c.cv, 0.05);
}

TEST(Narayanan21, Table2PtdpAndZero3) {
  const auto data = load_shared("published_dev.json");
  if (!data) GTEST_SKIP() << "../shared/data/published_dev.json not present";
  std::vector<Row> rows, times;
  for (const auto& rec : *data) {
    const std::string id = rec.at("id").get<std::string>();
    if (id.rfind("narayanan21_t2_", 0) != 0) continue;
    const Json& m = rec.at("model");
    const Json& p = rec.at("parallel");
    Json job = stack_2021();
    job["model"] = preset_for(m);
    job["gpus"] = rec.at("cluster").at("gpus");
    job["global_batch"] = p.at("global_batch");
    Row row;
    row.id = id;
    row.measured = rec.at("measured").at("tflops_per_gpu").get<double>();
    std::optional<double> t;
    if (p.at("zero").get<int>() == 3) {
      // ZeRO-3 (DeepSpeed) without model parallelism; the row does not say whether activations
      // were recomputed: they must be for 175B/530B to fit, so full recomputation.
      // DeepSpeed's ZeRO-3 (stack deepspeed) with the 2021 knobs of the other rows.
      job = Json{{"cluster", "dgx-a100"},  {"stack", "deepspeed"}, {"precision", "fp16"},
                 {"attention", "unfused"}, {"sp", false},          {"recompute", "full"}};
      job["model"] = preset_for(m);
      job["gpus"] = rec.at("cluster").at("gpus");
      job["global_batch"] = p.at("global_batch");
      job["tp"] = 1;
      job["pp"] = 1;
      job["zero"] = 3;
      job["micro_batch"] = p.at("micro_batch");
      job["overlap_grad_reduce"] = true;
      if (const auto r = run(job)) t = r->iteration.seconds();
      row.config = cat("zero3 mb", p.at("micro_batch").get<int>());
    } else {
      // PTD-P: only TP*PP is printed; the paper's heuristic (TP = 8 inside a node) gives the split.
      const int mp = p.at("model_parallel_size").get<int>();
      job["tp"] = 8;
      job["pp"] = mp / 8;
      job["layers_hint"] = m.at("layers");
      std::string chosen;
      Json best_job;
      t = best_ptdp(job, {p.at("micro_batch").get<int>()}, chosen, &best_job);
      row.config = cat("t8 p", mp / 8, " ", chosen);
      job = best_job;
    }
    row.config = cat("g", rec.at("cluster").at("gpus").get<int>(), " ", row.config);
    row.job = job;
    row.fits = t.has_value();
    if (t)
      row.predicted =
          eq3_flops(m, p.at("global_batch").get<double>()) / *t / rec.at("cluster").at("gpus").get<double>() / 1e12;
    rows.push_back(row);
    Row timed = row;
    timed.measured = eq3_flops(m, p.at("global_batch").get<double>()) /
                     (row.measured * 1e12 * rec.at("cluster").at("gpus").get<double>());
    if (t) times.push_back(timed);
  }
  ASSERT_EQ(rows.size(), 12u);
  print_table("Narayanan et al. SC'21 Table 2 (PTD-P and ZeRO-3, TFLOP/s per GPU, Eq. 3)", rows, "TFLOP/s");
  const Stats s = stats(rows);
  // Observed 2026-11-26: median 2.6% over all rows (PTD-P rows within a few % under
  // megatron-lm-2021; before stacks +10% to +16%); ZeRO-3 rows (stack deepspeed) +41% to +366%:
  // DeepSpeed's 2021 ZeRO-3 lost far more to parameter gathering than an NCCL ring at line
  // rate, and its throughput halves as GPUs double at fixed batch, which trainsim does not
  // reproduce (see docs/accuracy.md). One ZeRO-3 row (530B on 640 GPUs) does not fit in
  // trainsim's memory model. Pinned against regression, no target.
  EXPECT_LE(s.median_abs, 0.20);
  EXPECT_LE(s.not_fitting, 1u);
  std::vector<Row> ptdp, zero3;
  for (const auto& r : rows) (r.job.at("stack") == "deepspeed" ? zero3 : ptdp).push_back(r);
  expect_summary("narayanan_t2_ptdp", stats(ptdp));
  expect_summary("narayanan_t2_zero3", stats(zero3));
  expect_stack_accuracy("megatron-lm-2021", "tests/accuracy/narayanan21_test.cpp Table2 PTD-P", ptdp);
  expect_stack_accuracy("deepspeed", "tests/accuracy/narayanan21_test.cpp Table2 ZeRO-3", zero3);
  // Issue 34: calibrated on the rows that fit (two stacks on one cluster; leave-one-out;
  // TRAINSIM_ACCURACY_CALIBRATE=all, 130 s on 2 cores). Observed: 4.1% before, 4.0% leave-one-out;
  // the two stacks' GEMM scales are what the rows tell apart.
  if (!slow_calibrations()) return;
  const CalibrationStats c = calibrate_rows("Narayanan Table 2", times, models::calibration::RunMetric::kIterationTime);
  EXPECT_LE(c.cv, 0.05);
}

}  // namespace
}  // namespace trainsim::accuracy
