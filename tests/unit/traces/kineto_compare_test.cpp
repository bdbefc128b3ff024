// Real vs simulated timelines (traces/kineto/compare.*). A trace of the same job compares with
// no error at all; a trace whose GEMMs ran 1.25x slower shows exactly the GEMM time difference
// in compute, and a longer step; a trace of another job is refused.
#include "traces/kineto/compare.hpp"

#include <gtest/gtest.h>

#include "sim/error.hpp"
#include "tests/unit/traces/kineto_test_job.hpp"
#include "traces/kineto/export.hpp"
#include "traces/kineto/ops.hpp"

namespace trainsim::traces {
namespace {

TEST(KinetoCompare, SummaryAddsUp) {
  const KinetoTrace t = load_kineto_trace(test::kTestData + "kineto_pytorch_shape.json");
  const TimelineSummary s = summarize_timeline(t);
  EXPECT_EQ(s.steps, 1);
  EXPECT_EQ(s.step, sim::Time::ns(310000));
  EXPECT_EQ(s.compute, sim::Time::ns(80500 + 50000 + 12250 + 30000));
  EXPECT_EQ(s.comm_total, sim::Time::ns(100000));
  EXPECT_EQ(s.comm.at("all_reduce"), sim::Time::ns(100000));
  EXPECT_EQ(s.exposed_comm, sim::Time::ns(100000));  // nothing overlaps it
  EXPECT_EQ(s.idle, s.step - s.compute - s.comm_total);
}

TEST(KinetoCompare, TheSameJobComparesWithNoError) {
  const models::workload::Job job = test::example_job();
  const KinetoTrace t = load_kineto_trace(test::kExampleTrace);
  const KinetoComparison c = compare_kineto(t, test::kExampleTrace, job);
  EXPECT_EQ(c.real.step, c.simulated.step);
  EXPECT_EQ(c.real.compute, c.simulated.compute);
  EXPECT_EQ(c.real.comm_total, c.simulated.comm_total);
  EXPECT_EQ(c.real.exposed_comm, c.simulated.exposed_comm);
  EXPECT_EQ(c.real.idle, c.simulated.idle);
  ASSERT_FALSE(c.ops.empty());
  for (const OpComparison& o : c.ops) {
    if (o.predicted) {
      EXPECT_NEAR(o.predicted->seconds() / o.measured.seconds(), 1.0, 1e-3) << o.key;
    }
  }
}

TEST(KinetoCompare, SlowerGemmsShowAsTheirTimeDifference) {
  const models::workload::Job job = test::example_job();
  models::workload::Job slow = job;
  slow.gpu.gemm_efficiency = job.gpu.gemm_efficiency / 1.25;
  const KinetoTrace t = parse_kineto_trace(export_kineto(slow, 0), "slow.json");
  // What the compute model says the trace's GEMMs should have taken, against what they took.
  sim::Time measured, predicted;
  for (const KinetoOp& op : t.ops) {
    const OpInfo info = classify_op(op, t);
    if (info.cls != OpClass::kGemm) continue;
    for (int32_t k : op.kernels) measured += t.kernels[static_cast<size_t>(k)].duration;
    predicted += *predict_op(info, static_cast<int>(op.kernels.size()), job.gpu);
  }
  const KinetoComparison c = compare_kineto(t, "slow.json", job);
  // Compute kernels run one at a time on the compute stream: busy time is their sum.
  EXPECT_EQ(c.simulated.compute - c.real.compute, predicted - measured);
  EXPECT_LT(c.simulated.step, c.real.step);
}

TEST(KinetoCompare, AnotherJobIsRefused) {
  models::workload::Job job = test::example_job();
  const KinetoTrace t = load_kineto_trace(test::kExampleTrace);
  models::workload::Job bigger = job;
  bigger.gpus = 16;
  EXPECT_THROW(compare_kineto(t, "t", bigger), ConfigError);
  KinetoTrace a100 = t;
  a100.device_name = "NVIDIA A100-SXM4-80GB";
  EXPECT_THROW(compare_kineto(a100, "t", job), ConfigError);
}

}  // namespace
}  // namespace trainsim::traces
