// Failures, checkpoints and goodput against what teams reported for whole training runs
// (../shared/data/failures_dev.json; Llama 3 from its paper). Each run is planned as published,
// simulated, and its whole run played 300 times by the Monte Carlo with the default failure
// profile (models/presets/failures/default.json). The bounds pin the error we see today, so a
// change to the model shows up here; the errors themselves are the docs/reliability.md table.
//
// The default profile's rates come from the Llama 3 run (Dubey et al. 2024, arXiv:2407.21783,
// Table 5: 419 unexpected interruptions in 54 days on 16,384 H100s), so that row is in-sample:
// it checks the derivation, not the model. OPT-175B, BLOOM and Meta's research clusters are
// held out.
#include <gtest/gtest.h>

#include <cstdio>

#include "accuracy_common.hpp"
#include "models/failure/inventory.hpp"
#include "models/failure/stragglers.hpp"
#include "models/failure/study.hpp"
#include "summary.hpp"

namespace trainsim::accuracy {
namespace {

namespace mf = models::failure;

struct Study {
  mf::ReliabilityReport report;
  models::workload::Job job;
};

Study study(const Json& job_json, double days, std::optional<double> interval_h) {
  const models::workload::Job job = models::workload::resolve_job(models::workload::parse_job(job_json));
  const auto base = models::workload::simulate(job);
  EXPECT_TRUE(base.fits);
  const mf::FailureProfile profile = mf::load_failure_profile("default", {}, 1.0);
  mf::ReliabilityOptions o;
  o.horizon = sim::Time::from_seconds_ceil(days * 86400);
  o.runs = 300;
  if (interval_h) o.interval = sim::Time::from_seconds_ceil(*interval_h * 3600);
  auto model = mf::reliability_model(job, mf::count_components(job), base.iteration, profile, o,
                                     mf::straggler_slowdowns(job, base, profile));
  return {mf::run_study(std::move(model), o), job};
}

double failures_of(const mf::ReliabilityReport& r, const std::string& kind) {
  const auto& f = r.model.config.failures;
  for (size_t k = 0; k < f.size(); ++k)
    if (f[k].kind == kind) return r.summary.failures_by_kind[k];
  return 0;
}

const Json* find(const Json& data, const std::string& id) {
  for (const auto& row : data)
    if (row.value("id", "") == id) return &row;
  return nullptr;
}

TEST(ReliabilityPublished, Llama3_16384H100_54Days) {
  // In-sample. Llama 3 405B pre-training as Meta ran it at 8K context: TP 8, PP 16, DP 128
  // (Dubey et al. Table 4), 16M-token batches; 126 layers with lighter end stages.
  const Json job{{"model", "llama3-405b"},
                 {"cluster", "dgx-h100"},
                 {"gpus", 16384},
                 {"tp", 8},
                 {"pp", 16},
                 {"global_batch", 2048},
                 {"seq_len", 8192},
                 {"zero", 1},
                 {"recompute", "full"},
                 {"pp_layout", Json::array({7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7})}};
  const Study s = study(job, 54, std::nullopt);
  const auto& sm = s.report.summary;
  std::printf(
      "Llama 3 54 days: interruptions %.1f (reported 419 unexpected), ETTR %.3f (reported > 0.90), job MTBF "
      "%.2f h\n",
      sm.interruptions.mean, sm.ettr, s.report.model.mtbf.seconds() / 3600);
  EXPECT_NEAR(sm.interruptions.mean / 419.0, 1.0, 0.05);
  expect_summary_figure("reliability.llama3_ettr", number_text(sm.ettr, 3));
  // Observed: ETTR 0.868, 3 points under Meta's "> 90%": trainsim charges 10 minutes of restart
  // and 5 of diagnosis to every failure (Meta RSC's 5-20 minutes), which Meta's automation beats.
  EXPECT_GT(sm.ettr, 0.84);
  EXPECT_LT(sm.ettr, 0.92);
}

TEST(ReliabilityPublished, Opt175B_992A100_60Days) {
  const auto data = load_shared("failures_dev.json");
  if (!data) GTEST_SKIP() << "../shared/data/failures_dev.json not present";
  const Json* row = find(*data, "opt175b_logbook");
  ASSERT_NE(row, nullptr);
  ASSERT_EQ(row->at("system").at("gpus").get<int>(), 992);
  // OPT-175B: Megatron TP 8 inside FSDP over 124 hosts, 2M-token batches of 2048-token sequences.
  const Json job{{"model", "gpt3-175b"}, {"cluster", "dgx-a100"}, {"gpus", 992},        {"tp", 8}, {"zero", 3},
                 {"global_batch", 992},  {"seq_len", 2048},       {"recompute", "full"}};
  const Study s = study(job, 60, std::nullopt);
  const auto& sm = s.report.summary;
  // Reported: >= 35 manual and ~70 automatic restarts in ~2 months ("~90 restarts" over the
  // 12.xx lineage); "~2 machines go down every day".
  const double reported_restarts = 105, reported_machines_per_day = 2;
  const double machines_per_day =
      (failures_of(s.report, "gpu") + failures_of(s.report, "hbm") + failures_of(s.report, "host") +
       failures_of(s.report, "nvswitch") + failures_of(s.report, "nic")) /
      60.0;
  std::printf(
      "OPT-175B 60 days: interruptions %.1f (reported ~105 restarts, error %+.0f%%), machines down %.2f/day "
      "(reported ~2, error %+.0f%%)\n",
      sm.interruptions.mean, 100 * (sm.interruptions.mean / reported_restarts - 1), machines_per_day,
      100 * (machines_per_day / reported_machines_per_day - 1));
  // Observed: 30 interruptions (-71%) and 0.36 machines a day (-82%). A new cloud cluster in 2021
  // failed 3-6x as often as Meta's own H100 fleet in 2024; --failure-scale 3.5 reproduces it.
  expect_summary_figure("reliability.opt_restarts", signed_error_text(sm.interruptions.mean / reported_restarts - 1));
  EXPECT_GT(sm.interruptions.mean / reported_restarts, 0.2);
  EXPECT_LT(sm.interruptions.mean / reported_restarts, 0.4);
}

TEST(ReliabilityPublished, Bloom176B_384A100_117Days) {
  const auto data = load_shared("failures_dev.json");
  if (!data) GTEST_SKIP() << "../shared/data/failures_dev.json not present";
  const Json* row = find(*data, "bloom176b");
  ASSERT_NE(row, nullptr);
  ASSERT_EQ(row->at("system").at("gpus").get<int>(), 384);
  // BLOOM-176B (BigScience tr11): TP 4, PP 12, DP 8, 2048 x 2048-token batches, 70 layers, ALiBi
  // (modelled as rotary: no position table), checkpoints every 3 hours, March 11 to July 6 2022.
  const Json model{{"name", "bloom-176b"}, {"layers", 70},       {"hidden", 14336}, {"heads", 112},
                   {"ffn_hidden", 57344},  {"vocab", 250880},    {"seq_len", 2048}, {"activation", "gelu"},
                   {"norm", "layernorm"},  {"position", "rope"}, {"bias", true},    {"tied_embeddings", true},
                   {"dropout", false}};
  const Json job{{"model", model},
                 {"cluster", "dgx-a100"},
                 {"gpus", 384},
                 {"tp", 4},
                 {"pp", 12},
                 {"global_batch", 2048},
                 {"seq_len", 2048},
                 {"zero", 1},
                 {"recompute", "full"},
                 {"pp_layout", Json::array({5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5})}};
  const Study s = study(job, 117, 3.0);
  const auto& sm = s.report.summary;
  const double gpu_per_week = (failures_of(s.report, "gpu") + failures_of(s.report, "hbm")) / (117.0 / 7.0);
  // Work lost per hardware failure: the redone work over the failures.
  const double redo_h = sm.lost_s[static_cast<size_t>(mf::Cause::kRedoneWork)] / 3600 / sm.interruptions.mean;
  std::printf(
      "BLOOM 117 days: GPU failures %.2f/week (reported 1-2, error %+.0f%% vs 1.5), redone work %.2f h per "
      "failure (reported 1.5 h), tokens/s %.0f\n",
      gpu_per_week, 100 * (gpu_per_week / 1.5 - 1), redo_h, s.report.model.tokens_per_s);
  // Observed: 0.81 GPU failures a week (-46% against the middle of 1-2: a new cluster) and 1.5 h
  // of redone work per crash, as BigScience said ("on average we would lose 1.5h"), which with
  // a 3-hour interval is half an interval by construction: a consistency check only.
  expect_summary_figure("reliability.bloom_gpu_failures", signed_error_text(gpu_per_week / 1.5 - 1));
  expect_summary_figure("reliability.bloom_redo_h", number_text(redo_h, 1));
  EXPECT_GT(gpu_per_week, 0.5);
  EXPECT_LT(gpu_per_week, 1.1);
  EXPECT_NEAR(redo_h, 1.5, 0.2);
}

TEST(ReliabilityPublished, MetaResearchClusterMttf) {
  const auto data = load_shared("failures_dev.json");
  if (!data) GTEST_SKIP() << "../shared/data/failures_dev.json not present";
  const Json* row = find(*data, "meta_rsc_reliability");
  ASSERT_NE(row, nullptr);
  const double reported_1024 = row->at("mttf_1024gpu_jobs_hours").get<double>();
  const double projected_16384 = row->at("projected_mttf").at("gpus_16384_hours").get<double>();
  // RSC-1 is an A100 cluster; the dgx-h100 preset stands in for it because the dgx-a100 preset
  // stops at 16,000 GPUs (the failure counts per component are the same on both fabrics).
  const mf::FailureProfile profile = mf::load_failure_profile("default", {}, 1.0);
  auto mtbf_h = [&](int64_t gpus) {
    const auto job = models::workload::resolve_job(models::workload::parse_job(Json{{"model", "llama3-70b"},
                                                                                    {"cluster", "dgx-h100"},
                                                                                    {"gpus", gpus},
                                                                                    {"tp", 8},
                                                                                    {"global_batch", gpus / 8},
                                                                                    {"recompute", "full"}}));
    mf::ReliabilityOptions o;
    o.tokens = 1e12;
    return mf::reliability_model(job, mf::count_components(job), sim::Time::s(10), profile, o, {}).mtbf.seconds() /
           3600;
  };
  const double m1024 = mtbf_h(1024), m16384 = mtbf_h(16384);
  std::printf(
      "Meta RSC: MTTF of 1024-GPU jobs %.1f h (reported %.1f h, error %+.0f%%); 16,384 GPUs %.2f h (projected "
      "%.1f h, error %+.0f%%)\n",
      m1024, reported_1024, 100 * (m1024 / reported_1024 - 1), m16384, projected_16384,
      100 * (m16384 / projected_16384 - 1));
  expect_summary_figure("reliability.rsc_mttf_ratio", number_text(m1024 / reported_1024, 1));
  // Observed: 46 h against 7.9 h (RSC counts every job failure, user and software errors included,
  // on a shared research cluster) and 3.1 h against the 1.8 h projection (+72%).
  EXPECT_GT(m1024 / reported_1024, 4.0);
  EXPECT_LT(m1024 / reported_1024, 8.0);
  EXPECT_GT(m16384 / projected_16384, 1.4);
  EXPECT_LT(m16384 / projected_16384, 2.0);
}

}  // namespace
}  // namespace trainsim::accuracy
