// NVIDIA NeMo 24.07 performance summary (DGX-H100, FP8), as recorded in
// ../shared/data/published_dev_h100.json: 12 pretraining rows (GPT-3 5B-175B, Llama 2 7B-70B,
// Llama 3 8B/70B, Nemotron 8B-340B on 8-512 GPUs, tokens/s per GPU), the long-sequence sweep
// with context parallelism (Llama 2 7B, 4K-1M tokens on 4-1,024 GPUs, model TFLOP/s per GPU),
// and one Megatron-Core Mixtral 8x7B row (model TFLOP/s).
//
// Stack: `nemo-24.07` (models/presets/stacks/nemo-24.07.json): FP8 delayed scaling, Apex
// distributed Adam with bf16 gradient sync and overlapped parameter all-gather (ZeRO-1), TE 1.7's
// FlashAttention-2 backend, 16-bit LM head.
//
// Models: the rows give the shapes; the rest is the NeMo-Framework-Launcher configs of that
// release (conf/training/{gpt3,llama,nemotron}/*.yaml): GPT-3 = GeLU with biases, LayerNorm,
// learned positions, tied embeddings, hidden and attention dropout 0.1, GPT-2 BPE vocabulary
// padded to 50304; Llama = SwiGLU, RMSNorm, RoPE, no biases, untied, no dropout; Nemotron =
// squared-ReLU (2 matrices, priced as GeLU), LayerNorm1p, RoPE, no biases, untied, no dropout,
// 256K vocabulary. Micro-batch 1 where the row does not give one (the long-sequence rows).
//
// Measured quantities: tokens/s per GPU for the pretraining rows. The long-sequence rows give
// model TFLOP/s under NeMo's Llama 2 FLOP formula (nemo/utils/flops_formulas.py:
// F/token = L h^2 (12 + 12 g + 18 f/h + 12 s/h + 6 V/(L h)), g = query groups / heads; it
// reproduces the pretraining table's Llama 2 7B row, 780 TFLOP/s at 16,934 tokens/s, to 0.1%), so
// they are turned into tokens/s with it. Mixtral is reported (Megatron's model TFLOP/s) but not
// bounded: the source does not say its 468 TFLOP/s was measured with the mapping recorded.
//
// Targets (issue 19): pretraining median |error| <= 8% and every row fits; long-sequence median
// <= 8%. Unknown knobs: micro-batch 1 where the row gives none; Nemotron-4 340B uses its launcher
// recipe's bf16 optimizer states (below).
#include <gtest/gtest.h>

#include <cmath>

#include "accuracy_common.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/run/simulate.hpp"
#include "summary.hpp"

namespace trainsim::accuracy {
namespace {

Json nemo_model(const Json& m) {
  const std::string name = m.at("name").get<std::string>();
  const bool gpt = name.rfind("GPT3", 0) == 0, nemotron = name.rfind("Nemotron", 0) == 0;
  const bool llama = !gpt && !nemotron;
  Json out{{"name", name},
           {"layers", m.at("layers")},
           {"hidden", m.at("hidden")},
           {"heads", m.at("heads")},
           {"kv_heads", m.at("kv_heads")},
           {"ffn_hidden", m.at("ffn_hidden")},
           {"vocab", m.at("vocab").is_null() ? Json(gpt ? 50304 : 256000) : m.at("vocab")},
           {"seq_len", m.at("seq_len")},
           {"activation", llama ? "swiglu" : "gelu"},
           {"norm", llama ? "rmsnorm" : "layernorm"},
           {"position", gpt ? "learned" : "rope"},
           {"bias", gpt},
           {"tied_embeddings", gpt},
           {"dropout", gpt}};
  if (m.contains("moe") && !m.at("moe").is_null())
    out["moe"] = Json{{"experts", m.at("moe").at("experts")},
                      {"top_k", m.at("moe").at("topk")},
                      {"expert_ffn_hidden", m.at("ffn_hidden")}};
  return out;
}

Json nemo_job(const Json& rec) {
  const Json& p = rec.at("parallel");
  auto knob = [&](const char* k) { return p.at(k).is_null() ? Json(1) : p.at(k); };
  Json job{{"stack", "nemo-24.07"},
           {"model", nemo_model(rec.at("model"))},
           {"cluster", "dgx-h100"},
           {"gpus", rec.at("cluster").at("gpus")},
           {"tp", knob("tp")},
           {"pp", knob("pp")},
           {"cp", knob("cp")},
           {"micro_batch", knob("micro_batch")},
           {"global_batch", p.at("global_batch")},
           {"precision", rec.at("precision")}};
  if (p.contains("ep") && !p.at("ep").is_null()) job["ep"] = p.at("ep");
  // Nemotron-4 340B's launcher recipe (NeMo-Framework-Launcher conf/training/nemotron/
  // nemotron_340b.yaml) sets optim.dtype: bf16, the optimizer-state precision; the others leave
  // the fp32 default.
  if (rec.at("model").at("name").get<std::string>() == "Nemotron-340B") job["optimizer_states"] = "bf16";
  if (knob("vp").get<int>() > 1) {
    job["vp"] = p.at("vp");
    job["schedule"] = "interleaved";
  }
  return job;
}

double nemo_llama_flops_per_token(const Json& m) {
  const double L = m.at("layers").get<double>(), h = m.at("hidden").get<double>();
  const double f = m.at("ffn_hidden").get<double>(), s = m.at("seq_len").get<double>();
  const double V = m.at("vocab").get<double>();
  const double g = m.at("kv_heads").get<double>() / m.at("heads").get<double>();
  return L * h * h * (12.0 + 12.0 * g + 18.0 * f / h + 12.0 * s / h + 6.0 * V / (L * h));
}

// Simulates and fills the row's prediction (tokens/s per GPU) and its memory beside the budget.
Row simulate_row(const Json& rec, double measured) {
  const Json job = nemo_job(rec);
  const auto j = models::workload::resolve_job(models::workload::parse_job(job));
  const auto r = models::workload::simulate(j);
  Row row;
  row.id = rec.at("id").get<std::string>();
  row.job = job;
  row.measured = measured;
  row.fits = r.fits;
  if (r.fits) row.predicted = r.tokens_per_s / static_cast<double>(j.gpus);
  char mem[64];
  std::snprintf(mem, sizeof mem, " mem %.1f/%.1f GiB", r.peak_memory().gib(), r.capacity.gib());
  row.config = cat("g", j.gpus, " t", j.tp, " p", j.pp, " v", j.vp, " c", j.cp, " mb", j.micro_batch, mem);
  return row;
}

TEST(NeMo2407, PretrainingTokensPerGpu) {
  const auto data = load_shared("published_dev_h100.json");
  if (!data) GTEST_SKIP() << "../shared/data/published_dev_h100.json not present";
  std::vector<Row> rows;
  for (const auto& rec : *data)
    if (rec.at("id").get<std::string>().rfind("nemo2407_pretrain_", 0) == 0)
      rows.push_back(simulate_row(rec, rec.at("measured").at("tokens_per_s_per_gpu").get<double>()));
  ASSERT_EQ(rows.size(), 12u);
  print_table("NeMo 24.07 pretraining on DGX-H100, FP8 (tokens/s per GPU), stack nemo-24.07", rows, "tokens/s");
  const Stats s = stats(rows);
  expect_summary("nemo_pretrain", s);
  // Observed 2026-11-26: median 5.1%, signed median -0.3%, max 9.9% (Nemotron-4 340B and GPT-3
  // 175B on 512 GPUs, both pessimistic); the FP8 GEMM scale of the stack is fitted on these rows
  // (docs/stacks.md). Every row fits (Nemotron-4 340B: 75.9 of 79.65 GiB with its recipe's bf16
  // optimizer states). Target 8% and all rows fitting: met.
  // Observed 2026-11-27 with NCCL's protocols (issue 21): median 4.4%, max 10.7% (Nemotron-4 340B,
  // -9.9% before): its TP 8 overlap chunks now pay NCCL's calibrated per-call latency, where
  // NeMo's Transformer Engine runs them as userbuffers copies without NCCL (not modelled). The
  // bound moved from 10.5% to 11% for that row; the median improved from 5.1%.
  EXPECT_LE(s.median_abs, 0.06);
  EXPECT_LE(s.max_abs, 0.11);
  EXPECT_EQ(s.not_fitting, 0u);
  expect_stack_accuracy("nemo-24.07", "tests/accuracy/nemo2407_test.cpp PretrainingTokensPerGpu", rows);
  // Issue 34: calibrated on these rows (leave-one-out). The stack's FP8 GEMM scale was fitted on
  // them, so nothing more is worth fitting: the cross-validated error is the uncalibrated one.
  // Observed 2026-11-28: 4.9%, then 5.04% once every step of a ring across servers pays the
  // journey's mean latency as NCCL's table charges it (issue 35; median still 5.0%).
  const CalibrationStats c =
      calibrate_rows("NeMo 24.07 pretraining", rows, models::calibration::RunMetric::kTokensPerGpu);
  EXPECT_LE(c.cv, 0.055);
}

TEST(NeMo2407, LongSequenceSweep) {
  const auto data = load_shared("published_dev_h100.json");
  if (!data) GTEST_SKIP() << "../shared/data/published_dev_h100.json not present";
  std::vector<Row> rows;
  for (const auto& rec : *data) {
    if (rec.at("id").get<std::string>().rfind("nemo_longseq_", 0) != 0) continue;
    const double tflops = rec.at("measured").at("tflops_per_gpu").get<double>();
    rows.push_back(simulate_row(rec, tflops * 1e12 / nemo_llama_flops_per_token(rec.at("model"))));
  }
  ASSERT_EQ(rows.size(), 9u);
  print_table("NeMo 24.07 long-sequence sweep, Llama 2 7B, FP8 (tokens/s per GPU from model TFLOP/s)", rows,
              "tokens/s");
  const Stats s = stats(rows);
  expect_summary("nemo_long", s);
  // Observed 2026-11-26: median 8.7%, from +0.5% at 4K to -11.3% at 512K: pessimistic once
  // attention dominates: TE 1.7 ran cuDNN fused attention on H100, priced at FlashAttention-2-class
  // rates (the validator's mma.sync ratios), slower than what its ring attention reached; at the
  // preset's rates (today's cuDNN) the rows are +12% to +15% (docs/stacks.md). Target 8% not met;
  // all rows fit.
  EXPECT_LE(s.median_abs, 0.095);
  EXPECT_LE(s.max_abs, 0.125);
  EXPECT_EQ(s.not_fitting, 0u);
  expect_stack_accuracy("nemo-24.07", "tests/accuracy/nemo2407_test.cpp LongSequenceSweep", rows);
  // Issue 34: calibrated on these rows (leave-one-out; TRAINSIM_ACCURACY_CALIBRATE=all).
  if (!slow_calibrations()) return;
  const CalibrationStats c =
      calibrate_rows("NeMo long-sequence sweep", rows, models::calibration::RunMetric::kTokensPerGpu);
  EXPECT_LE(c.cv, 0.05);
}

TEST(NeMo2407, MegatronCoreMixtralReported) {
  const auto data = load_shared("published_dev_h100.json");
  if (!data) GTEST_SKIP() << "../shared/data/published_dev_h100.json not present";
  for (const auto& rec : *data) {
    if (rec.at("id").get<std::string>().rfind("megatron_moe_", 0) != 0) continue;
    Json job = nemo_job(rec);
    job["stack"] = "megatron-core-2024";
    job["zero"] = 1;
    const auto r = run(job);
    ASSERT_TRUE(r.has_value()) << "Mixtral 8x7B on 64 H100 must fit";
    const double measured = rec.at("measured").at("tflops_per_gpu").get<double>();
    std::printf(
        "Mixtral 8x7B (Megatron-Core, bf16, TP1 EP8 PP4 VP8): model TFLOP/s per GPU measured %.0f, "
        "predicted %.0f (%+.1f%%; the mapping is inferred by the source, not bounded)\n",
        measured, r->model_tflops_per_gpu, 100.0 * (r->model_tflops_per_gpu - measured) / measured);
    EXPECT_GT(r->model_tflops_per_gpu, 0.0);
  }
}

}  // namespace
}  // namespace trainsim::accuracy
