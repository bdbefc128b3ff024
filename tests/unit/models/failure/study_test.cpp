// A reliability study of a plan: checkpoint sizes from the model, the interval search, the
// closed form beside the Monte Carlo, errors.
#include "models/failure/study.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "models/failure/inventory.hpp"

namespace trainsim::models::failure {
namespace {

using sim::Time;
using sim::config::Json;
using testing::config_error;

workload::Job job_of(int64_t zero) {
  return testing::job(Json{{"model", "llama3-70b"},
                           {"cluster", "dgx-h100"},
                           {"gpus", 1024},
                           {"tp", 8},
                           {"pp", 4},
                           {"global_batch", 512},
                           {"recompute", "full"},
                           {"zero", zero}});
}

ReliabilityOptions tokens(double t) {
  ReliabilityOptions o;
  o.tokens = t;
  o.runs = 100;
  return o;
}

TEST(ReliabilityModel, CheckpointBytesFollowTheModelAndZero) {
  const FailureProfile f = load_failure_profile("default", {}, 1.0);
  const workload::Job z1 = job_of(1), z0 = job_of(0);
  const Inventory inv = count_components(z1);
  const ReliabilityModel m1 = reliability_model(z1, inv, Time::s(10), f, tokens(1e12), {});
  const double p = z1.model.parameters();
  // 14 bytes a parameter: bf16 weights and fp32 master weights with Adam's two moments.
  EXPECT_NEAR(static_cast<double>(m1.checkpoint_input.state.count()), 14 * p, 1);
  // dp = 32 replicas read the weights; ZeRO-1 reads the optimizer state once.
  EXPECT_NEAR(static_cast<double>(m1.checkpoint_input.restore_read.count()), (12 + 2 * 32) * p, 1);
  const ReliabilityModel m0 = reliability_model(z0, inv, Time::s(10), f, tokens(1e12), {});
  EXPECT_NEAR(static_cast<double>(m0.checkpoint_input.restore_read.count()), 14 * 32 * p, 32);
  // ZeRO-3 shards the weights too: one copy of everything; HSDP over 8 of the 32 replicas keeps 4.
  workload::Job z3 = job_of(3);
  EXPECT_NEAR(static_cast<double>(
                  reliability_model(z3, inv, Time::s(10), f, tokens(1e12), {}).checkpoint_input.restore_read.count()),
              14 * p, 1);
  z3.dp_shard = 8;
  EXPECT_NEAR(static_cast<double>(
                  reliability_model(z3, inv, Time::s(10), f, tokens(1e12), {}).checkpoint_input.restore_read.count()),
              14 * 4 * p, 4);
  ReliabilityOptions b = tokens(1e12);
  b.broadcast_restore = true;
  const ReliabilityModel mb = reliability_model(z0, inv, Time::s(10), f, b, {});
  EXPECT_EQ(mb.checkpoint_input.restore_read, mb.checkpoint_input.state);
  EXPECT_LT(mb.checkpoint.restore, m0.checkpoint.restore);
  // The broadcast sends the other 31 replicas' 14 bytes a parameter over 1,024 GPUs' NICs (50 GB/s each).
  EXPECT_NEAR(mb.checkpoint_input.restore_extra.seconds(), 14 * 31 * p / 1024 / 50e9, 1e-6);
  // Work: 1e12 tokens at 512 x 8192 tokens per 10 s iteration.
  EXPECT_NEAR(m1.config.work->seconds(), 1e12 / (512.0 * 8192.0) * 10.0, 1e-3);
  // Spares: 5% of 128 nodes, rounded up.
  EXPECT_EQ(m1.config.spares, 7);
}

TEST(ReliabilityModel, BadOptionsAreOneLineErrors) {
  const FailureProfile f = load_failure_profile("default", {}, 1.0);
  const workload::Job j = job_of(1);
  const Inventory inv = count_components(j);
  ReliabilityOptions o = tokens(1e9);
  o.interval = Time::s(100 * 86400);
  EXPECT_NE(config_error([&] {
              reliability_model(j, inv, Time::s(10), f, o, {});
            }).find("--checkpoint-interval: 2400 h is longer than the run"),
            std::string::npos);
  ReliabilityOptions short_interval = tokens(1e12);
  short_interval.interval = Time::s(5);
  EXPECT_NE(config_error([&] {
              reliability_model(j, inv, Time::s(10), f, short_interval, {});
            }).find("--checkpoint-interval: 5 s is shorter than one iteration (10 s)"),
            std::string::npos);
  EXPECT_NE(
      config_error([&] { reliability_model(j, inv, Time::s(10), f, tokens(1e20), {}); }).find("--tokens: would take"),
      std::string::npos);
  ReliabilityOptions none;
  EXPECT_NE(config_error([&] { reliability_model(j, inv, Time::s(10), f, none, {}); }).find("--tokens"),
            std::string::npos);
  ReliabilityOptions bad = tokens(1e12);
  bad.checkpoint = "asynch";
  EXPECT_NE(config_error([&] {
              reliability_model(j, inv, Time::s(10), f, bad, {});
            }).find("unknown checkpoint strategy \"asynch\""),
            std::string::npos);
}

TEST(ReliabilityStudy, SearchFindsAnIntervalNearDalysAndTheClosedFormAgrees) {
  // Exponential laws only (the default profile): the Monte Carlo optimum sits near Daly's, and
  // the closed form is within a few percent of the Monte Carlo's mean.
  const FailureProfile f = load_failure_profile("default", {}, 1.0);
  const workload::Job j = job_of(1);
  ReliabilityOptions o = tokens(2e12);
  o.runs = 300;
  const ReliabilityReport r = run_study(reliability_model(j, count_components(j), Time::s(10), f, o, {}), o);
  EXPECT_FALSE(r.search.empty());
  EXPECT_GT(r.best_interval.seconds(), 0.5 * r.daly_interval.seconds());
  EXPECT_LT(r.best_interval.seconds(), 2.0 * r.daly_interval.seconds());
  EXPECT_NEAR(r.summary.wall_s.mean / closed_form_time(r.model).seconds(), 1.0, 0.05);
  EXPECT_GT(r.summary.ettr, 0.5);
  EXPECT_LT(r.summary.ettr, 1.0);
  const Json js = r.to_json();
  for (const char* k : {"schema_version", "expected_days", "ettr", "interruptions", "lost_hours_by_cause",
                        "best_checkpoint_interval_s", "young_daly_interval_s"})
    EXPECT_TRUE(js.contains(k)) << k;
  EXPECT_EQ(js["expected_days"].size(), 4u);
}

TEST(ReliabilityStudy, SameSeedSameReport) {
  const FailureProfile f = load_failure_profile("default", {}, 1.0);
  const workload::Job j = job_of(1);
  ReliabilityOptions o = tokens(5e11);
  o.runs = 50;
  const auto model = reliability_model(j, count_components(j), Time::s(10), f, o, {});
  EXPECT_EQ(run_study(model, o).to_json().dump(), run_study(model, o).to_json().dump());
  o.seed = 1;
  EXPECT_NE(run_study(model, o).to_json().dump(), run_study(model, tokens(5e11)).to_json().dump());
}

}  // namespace
}  // namespace trainsim::models::failure
