// Logged runs (models/calibration/runs/): reading a run file into jobs, the end-to-end fit, the
// calibration it writes and the band a job then gets.
#include <gtest/gtest.h>

#include <cmath>

#include "../test_support.hpp"
#include "models/calibration/runs/record_job.hpp"
#include "models/calibration/runs/run_fit.hpp"
#include "models/calibration/runs/run_record.hpp"
#include "models/hardware/calibration.hpp"
#include "models/presets/catalog.hpp"
#include "models/workload/job/prediction_band.hpp"
#include "models/workload/run/simulate.hpp"

namespace trainsim::models::calibration {
namespace {

using sim::config::Json;

Json record(const std::string& id, int64_t gpus, int64_t tp, double tokens_per_gpu) {
  return Json{{"id", id},
              {"framework", "NeMo 24.07 (Megatron-Core)"},
              {"precision", "fp8"},
              {"model",
               {{"name", "Llama 3 8B"},
                {"layers", 32},
                {"hidden", 4096},
                {"heads", 32},
                {"kv_heads", 8},
                {"ffn_hidden", 14336},
                {"vocab", 128256},
                {"seq_len", 8192},
                {"moe", nullptr}}},
              {"cluster", {{"gpu", "H100 80GB HBM3"}, {"gpus", gpus}, {"gpus_per_node", 8}}},
              {"parallel", {{"tp", tp}, {"pp", 1}, {"cp", 1}, {"micro_batch", 1}, {"global_batch", 2 * gpus / tp}}},
              {"measured", {{"tokens_per_s_per_gpu", tokens_per_gpu}}}};
}

std::string read_error(const Json& file, RunDefaults d = {}) {
  return models::testing::config_error([&] { (void)read_runs(file, d, "runs"); });
}

TEST(RecordJob, NamesFromFreeText) {
  EXPECT_EQ(cluster_for("GB200 (DGX-GB200 / GB200 NVL72)").cluster, "gb200-nvl72");
  EXPECT_EQ(cluster_for("B200 (DGX-B200)").cluster, "dgx-b200");
  EXPECT_EQ(cluster_for("H100 SXM 96GB HBM2e (Meta Grand Teton, 500W power limit)").gpu, "h100-sxm-96gb");
  EXPECT_EQ(cluster_for("A100-SXM4-80GB").cluster, "dgx-a100");
  EXPECT_EQ(cluster_for("MI300X").cluster, "");
  EXPECT_EQ(stack_for("Megatron-Bridge / NeMo 25.11"), "megatron-bridge-2025");
  EXPECT_EQ(stack_for("NeMo 25.04 (NeMo 2.0 / Megatron-Core)"), "megatron-bridge-2025");
  EXPECT_EQ(stack_for("NeMo 24.03.01 (Megatron-Core)"), "nemo-24.07");
  EXPECT_EQ(stack_for("Megatron-Core v0.9"), "megatron-core-2024");
  EXPECT_EQ(stack_for("Megatron-Core 0.12"), "megatron-core-2025");
  EXPECT_EQ(stack_for("Megatron-DeepSpeed (per paper summaries)"), "deepspeed");
  EXPECT_EQ(stack_for("torchtitan 9dec370"), "torchtitan");
  EXPECT_EQ(stack_for("Megatron-LM (PTD-P)"), "megatron-lm-2021");
  EXPECT_EQ(stack_for("JAX/MaxText"), "");
  EXPECT_EQ(precision_for("FP8-MX"), "mxfp8");
  EXPECT_EQ(precision_for("FP8 (per-tensor, current scaling)"), "fp8");
  EXPECT_EQ(precision_for("fp16 mixed precision"), "fp16");
  EXPECT_EQ(precision_for("not stated (mixed precision)"), "");
}

TEST(RunRecords, JobFromFieldsPresetByShape) {
  const RunFile f = read_runs(Json::array({record("a", 8, 2, 12000)}), {}, "runs");
  ASSERT_EQ(f.runs.size(), 1u);
  const Json& j = f.runs[0].job;
  EXPECT_EQ(j.at("cluster"), "dgx-h100");
  EXPECT_EQ(j.at("stack"), "nemo-24.07");
  EXPECT_EQ(j.at("precision"), "fp8");
  EXPECT_EQ(j.at("model").at("name"), "llama3-8b");  // the preset with the same shape
  EXPECT_EQ(j.at("tp"), 2);
  EXPECT_EQ(f.runs[0].metric, RunMetric::kTokensPerGpu);
  // Defaults (the command line's job flags) win over what the fields say; a record's `job` over both.
  Json rec = record("a", 8, 2, 12000);
  rec["job"] = Json{{"zero", 0}};
  RunDefaults d;
  d.job = Json{{"stack", "megatron-core-2025"}, {"zero", 1}};
  const RunFile g = read_runs(Json::array({rec}), d, "runs");
  EXPECT_EQ(g.runs[0].job.at("stack"), "megatron-core-2025");
  EXPECT_EQ(g.runs[0].job.at("zero"), 0);
  // The object form with file defaults.
  const RunFile h = read_runs(
      Json{{"defaults", {{"stack", "torchtitan"}}}, {"runs", Json::array({record("a", 8, 2, 1)})}}, {}, "runs");
  EXPECT_EQ(h.runs[0].job.at("stack"), "torchtitan");
}

TEST(RunRecords, BadInputNamesTheFieldAndTheFix) {
  Json no_measure = record("a", 8, 1, 1);
  no_measure["measured"] = Json::object();
  EXPECT_NE(read_error(Json::array({no_measure})).find("runs[0].measured: has no quantity"), std::string::npos);
  Json fw = record("a", 8, 1, 1);
  fw["framework"] = "JAX/MaxText";
  EXPECT_NE(read_error(Json::array({fw})).find("runs[0].framework"), std::string::npos);
  EXPECT_NE(read_error(Json::array({fw})).find("--stack"), std::string::npos);
  Json prec = record("a", 8, 1, 1);
  prec["precision"] = nullptr;
  EXPECT_NE(read_error(Json::array({prec})).find("runs[0].precision: does not say the precision"), std::string::npos);
  Json neg = record("a", 8, 1, -5);
  EXPECT_NE(read_error(Json::array({neg})).find("tokens_per_s_per_gpu: must be between"), std::string::npos);
  EXPECT_NE(read_error(Json("x")).find("expected an array of run records"), std::string::npos);
  EXPECT_NE(read_error(Json::array()).find("holds no usable run"), std::string::npos);
  // --skip-unusable keeps the rest and says what it skipped.
  RunDefaults skip;
  skip.skip_unusable = true;
  const RunFile f = read_runs(Json::array({fw, record("b", 8, 1, 1)}), skip, "runs");
  ASSERT_EQ(f.runs.size(), 1u);
  ASSERT_EQ(f.skipped.size(), 1u);
  EXPECT_NE(f.skipped[0].find("runs[0] (a)"), std::string::npos);
}

// Runs whose "measurements" are the presets' own predictions slowed by 15 %: the fit must find
// constants that remove most of it, say so in the calibration, and give the same bytes on any
// number of threads.
TEST(RunFit, RecoversAUniformSlowdownDeterministically) {
  std::vector<RunRecord> runs;
  const int64_t shapes[][2] = {{8, 2}, {8, 4}, {16, 2}, {16, 4}, {32, 2}, {32, 8}};
  for (const auto& s : shapes) {
    const RunFile f = read_runs(Json::array({record("r" + std::to_string(runs.size()), s[0], s[1], 1.0)}), {}, "runs");
    RunRecord r = f.runs[0];
    const auto j = workload::resolve_job(workload::parse_job(r.job));
    const auto sim = workload::simulate(j);
    ASSERT_TRUE(sim.fits);
    r.measured = 0.85 * sim.tokens_per_s / static_cast<double>(j.gpus);
    runs.push_back(r);
  }
  RunFitOptions one;
  one.threads = 1;
  RunFitOptions two = one;
  two.threads = 2;
  const RunFitResult a = fit_runs(runs, one);
  const RunFitResult b = fit_runs(runs, two);
  EXPECT_EQ(a.calibration.dump(), b.calibration.dump());
  EXPECT_NEAR(a.median_before, 1.0 / 0.85 - 1.0, 0.01);
  EXPECT_LT(a.median_after, 0.03);
  EXPECT_LT(a.median_cv, 0.04);
  EXPECT_EQ(a.used, runs.size());
  int fitted = 0;
  for (const auto& c : a.constants) fitted += c.fitted;
  EXPECT_GE(fitted, 1);
  EXPECT_LE(fitted, 2);  // 6 runs support 2 constants
  // The calibration is a valid file; a job under it carries its band and evidence.
  const hardware::Calibration cal = hardware::parse_calibration(a.calibration, "calibration");
  EXPECT_GT(cal.error_band, 0.0);
  EXPECT_EQ(cal.error_runs, 6);
  Json job = runs[0].job;
  job["calibration"] = a.calibration;
  const auto inside = workload::prediction_band(workload::resolve_job(workload::parse_job(job)));
  EXPECT_FALSE(inside.extrapolated);
  EXPECT_NEAR(inside.relative, cal.error_band, 1e-4);
  job["gpus"] = 1024;
  job["global_batch"] = 1024;
  const auto far = workload::prediction_band(workload::resolve_job(workload::parse_job(job)));
  EXPECT_TRUE(far.extrapolated);
  ASSERT_EQ(far.outside.size(), 1u);
  EXPECT_NE(far.outside[0].find("GPUs 1024"), std::string::npos);
  EXPECT_GE(far.relative, 0.15);
}

// A base calibration (a validator's kernel fit) is the prior: the result keeps its constants
// beside the fitted ones and says where it came from.
TEST(RunFit, KeepsTheBaseCalibrationsKernelConstants) {
  std::vector<RunRecord> runs;
  for (const auto& [gpus, tp] : {std::pair<int64_t, int64_t>{8, 2}, {8, 4}, {16, 2}}) {
    RunRecord r = read_runs(Json::array({record("r", gpus, tp, 1.0)}), {}, "runs").runs[0];
    r.job["calibration"] = "h100-sxm-80gb-measured";
    const auto j = workload::resolve_job(workload::parse_job(r.job));
    r.measured = 0.8 * workload::simulate(j).tokens_per_s / static_cast<double>(j.gpus);
    runs.push_back(r);
  }
  const RunFitResult f = fit_runs(runs, {});
  const Json& cal = f.calibration;
  const hardware::Calibration base =
      hardware::parse_calibration(presets::find("calibrations", "h100-sxm-80gb-measured", "calibration"), "base");
  for (auto it = base.gpu_overrides.begin(); it != base.gpu_overrides.end(); ++it) {
    bool fitted = false;
    for (const auto& c : f.constants)
      fitted = fitted || (c.fitted && (c.param.name == it.key() || (c.param.name == "attention_efficiency" &&
                                                                    it.key() == "attention_bwd_efficiency")));
    if (!fitted) {
      EXPECT_EQ(cal.at("gpu_overrides").at(it.key()), *it) << it.key();
    }
  }
  EXPECT_EQ(cal.at("fit").at("base").at("name"), "h100-sxm-80gb-measured");
  EXPECT_NE(cal.at("description").get<std::string>().find("over calibration h100-sxm-80gb-measured"),
            std::string::npos);
  EXPECT_LT(f.median_after, f.median_before);
  (void)hardware::parse_calibration(cal, "calibration");
  // Runs naming different base calibrations cannot share one fit.
  runs[1].job.erase("calibration");
  EXPECT_NE(models::testing::config_error([&] { (void)fit_runs(runs, {}); }).find("differs from"), std::string::npos);
}

TEST(RunFit, RunsThatDoNotFitAreLeftOutAndSaidSo) {
  std::vector<RunRecord> runs;
  for (const auto& [gpus, tp] : {std::pair<int64_t, int64_t>{8, 1}, {8, 2}, {16, 2}}) {
    RunRecord r = read_runs(Json::array({record("r", gpus, tp, 5000.0)}), {}, "runs").runs[0];
    runs.push_back(r);
  }
  runs[0].job["micro_batch"] = 64;  // far beyond 80 GB at TP 1
  runs[0].job["global_batch"] = 512;
  const RunFitResult r = fit_runs(runs, {});
  EXPECT_EQ(r.used, 2u);
  EXPECT_FALSE(r.outcomes[0].fits);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("does not fit in memory"), std::string::npos);
}

TEST(RunFit, ContradictoryRunsAreReported) {
  std::vector<RunRecord> runs;
  for (double m : {5000.0, 11000.0, 6000.0})
    runs.push_back(read_runs(Json::array({record("r", 8, 2, m)}), {}, "runs").runs[0]);
  runs[2].job["tp"] = 4;
  const RunFitResult r = fit_runs(runs, {});
  bool said = false;
  for (const auto& n : r.notes) said = said || n.find("contradictory runs") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(CalibrationStackOverrides, ApplyToTheirStackOnly) {
  const Json cal{{"name", "team"},
                 {"gpu", "h100-sxm-80gb"},
                 {"stack_overrides", {{"nemo-24.07", {{"step_overhead", "40ms"}, {"kernels.fp8_gemm_scale", 0.8}}}}}};
  Json job{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 8}, {"global_batch", 8}, {"tp", 2},
           {"calibration", cal}};
  job["stack"] = "nemo-24.07";
  const auto on = workload::resolve_job(workload::parse_job(job));
  EXPECT_NEAR(on.stack.step_overhead.seconds(), 0.040, 1e-9);
  EXPECT_NEAR(on.stack.kernels.fp8_gemm_scale, 0.8, 1e-12);
  EXPECT_EQ(on.stack.sources.at("step_overhead"), "calibration \"team\"");
  job["stack"] = "megatron-core-2025";
  const auto off = workload::resolve_job(workload::parse_job(job));
  EXPECT_NEAR(off.stack.step_overhead.seconds(),
              workload::resolve_job(workload::parse_job(models::testing::with(job, Json{{"calibration", nullptr}})))
                  .stack.step_overhead.seconds(),
              1e-12);
  // Bad overrides name their path.
  Json bad = cal;
  bad["stack_overrides"]["nemo-24.07"] = Json{{"kernels.gemm_scal", 0.9}};
  EXPECT_NE(models::testing::config_error([&] { hardware::parse_calibration(bad, "calibration"); })
                .find("calibration.stack_overrides.nemo-24.07.kernels.gemm_scal: is not a calibrated stack constant "
                      "(did you mean \"kernels.gemm_scale\"?)"),
            std::string::npos);
  bad["stack_overrides"]["nemo-24.07"] = Json{{"kernels.gemm_scale", 9.0}};
  EXPECT_NE(models::testing::config_error([&] { hardware::parse_calibration(bad, "calibration"); }).find("gemm_scale"),
            std::string::npos);
  bad["stack_overrides"] = Json::object();
  bad["evidence"] = Json{{"gpus", {512, 8}}};
  EXPECT_NE(models::testing::config_error([&] {
              hardware::parse_calibration(bad, "calibration");
            }).find("calibration.evidence.gpus: max is below min"),
            std::string::npos);
}

TEST(PredictionBand, FromTheStacksAccuracyEntries) {
  Json job{{"model", "llama3-8b"},  {"cluster", "dgx-h100"}, {"gpus", 8}, {"global_batch", 8}, {"tp", 2},
           {"stack", "nemo-24.07"}, {"precision", "fp8"}};
  const auto in = workload::prediction_band(workload::resolve_job(workload::parse_job(job)));
  EXPECT_FALSE(in.extrapolated) << in.outside.size();
  EXPECT_GT(in.relative, 0.0);
  EXPECT_NE(in.basis.find("nemo2407_test.cpp"), std::string::npos);
  job["precision"] = "bf16";
  const auto out = workload::prediction_band(workload::resolve_job(workload::parse_job(job)));
  EXPECT_TRUE(out.extrapolated);
  ASSERT_FALSE(out.outside.empty());
  EXPECT_NE(out.outside[0].find("precision bf16"), std::string::npos);
  EXPECT_GE(out.relative, 2.0 * in.relative - 1e-12);
  job["stack"] = "research";
  const auto none = workload::prediction_band(workload::resolve_job(workload::parse_job(job)));
  EXPECT_TRUE(none.extrapolated);
  EXPECT_NEAR(none.relative, 0.25, 1e-12);
}

}  // namespace
}  // namespace trainsim::models::calibration
