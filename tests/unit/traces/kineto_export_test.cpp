// A simulated iteration as a Kineto trace (traces/kineto/export.*): the checked-in example is what
// the exporter writes today, byte for byte (regenerate it with the command in docs/kineto.md when
// the models change), and reading it back gives the simulated kernels and the iteration time.
#include "traces/kineto/export.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "models/workload/run/simulate.hpp"
#include "sim/error.hpp"
#include "tests/unit/traces/kineto_test_job.hpp"
#include "traces/kineto/ops.hpp"
#include "traces/kineto/trace.hpp"

namespace trainsim::traces {
namespace {

TEST(KinetoExport, ExampleTraceIsWhatTheExporterWrites) {
  std::ostringstream now;
  write_kineto(now, export_kineto(test::example_job(), 0));
  std::ifstream f(test::kExampleTrace);
  std::stringstream checked_in;
  checked_in << f.rdbuf();
  EXPECT_TRUE(now.str() == checked_in.str())
      << "traces/examples/tiny-llama-tp2-pp2.rank0.json is stale: regenerate it (docs/kineto.md)";
  std::ostringstream again;
  write_kineto(again, export_kineto(test::example_job(), 0));
  EXPECT_EQ(now.str(), again.str());
}

TEST(KinetoExport, ReadBackItIsTheSimulatedIteration) {
  const models::workload::Job job = test::example_job();
  const models::workload::SimulationResult r = models::workload::simulate(job);
  for (int64_t rank : {0, 7}) {
    const KinetoTrace t = parse_kineto_trace(export_kineto(job, rank), "export");
    EXPECT_EQ(t.rank, rank);
    EXPECT_EQ(t.world_size, job.gpus);
    ASSERT_EQ(t.steps.size(), 1u);
    EXPECT_EQ(t.steps[0].end - t.steps[0].start, r.iteration);
    // Kernels on one stream never overlap, and every GEMM has its shape.
    std::map<int64_t, sim::Time> stream_end;
    int gemms = 0;
    for (const KinetoKernel& k : t.kernels) {
      EXPECT_GE(k.start, stream_end[k.stream]) << k.name;
      stream_end[k.stream] = k.end();
    }
    for (const KinetoOp& op : t.ops)
      if (classify_op(op, t).cls == OpClass::kGemm) ++gemms;
    // 4 layers / 2 stages x 4 micro-batches x (4 forward + 8 backward GEMMs), and the LM head
    // (forward, input and weight gradient) on the last stage.
    EXPECT_EQ(gemms, 2 * 4 * 12 + (rank == 7 ? 3 * 4 : 0)) << "rank " << rank;
  }
}

TEST(KinetoExport, RejectsARankOutsideTheJobAndFp8) {
  models::workload::Job job = test::example_job();
  EXPECT_THROW(export_kineto(job, 8), ConfigError);
  EXPECT_THROW(export_kineto(job, -1), ConfigError);
  job.precision = models::compute::Precision::kFp8;
  EXPECT_THROW(export_kineto(job, 0), ConfigError);
}

}  // namespace
}  // namespace trainsim::traces
