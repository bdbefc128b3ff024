// The Kineto parser (traces/kineto/trace.*) on a hand-written trace in the shape PyTorch 2.x writes
// (kernels linked by External id, by correlation only, NCCL metadata on the operator, a CPU-only
// ProfilerStep), on the example trace `trainsim kineto export` wrote, and on bad input.
#include "traces/kineto/trace.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "sim/error.hpp"
#include "tests/unit/traces/kineto_test_job.hpp"

namespace trainsim::traces {
namespace {

using sim::Time;
using sim::config::Json;

const KinetoOp& op_named(const KinetoTrace& t, const std::string& name) {
  for (const KinetoOp& op : t.ops)
    if (op.name == name) return op;
  ADD_FAILURE() << "no operator " << name;
  static const KinetoOp none;
  return none;
}

TEST(KinetoTrace, PytorchShapedTraceLinksEveryKernelToItsOperator) {
  const KinetoTrace t = load_kineto_trace(test::kTestData + "kineto_pytorch_shape.json");
  EXPECT_EQ(t.device_name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(t.device_memory, 85089730560);
  EXPECT_EQ(t.rank, 1);
  EXPECT_EQ(t.world_size, 2);
  ASSERT_EQ(t.ops.size(), 6u);
  ASSERT_EQ(t.kernels.size(), 5u);
  EXPECT_EQ(t.unlinked_kernels, 0u);
  // In start order; microseconds with three decimals become exact nanoseconds.
  EXPECT_EQ(t.kernels[0].start, Time::ns(1100000));
  EXPECT_EQ(t.kernels[0].duration, Time::ns(80500));
  EXPECT_EQ(t.kernels[3].duration, Time::ns(12250));
  // The GEMM kernel belongs to aten::addmm (its External id), not to the enclosing aten::linear.
  const KinetoOp& addmm = op_named(t, "aten::addmm");
  ASSERT_EQ(addmm.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[static_cast<size_t>(addmm.kernels[0])].correlation, 501);
  EXPECT_TRUE(op_named(t, "aten::linear").kernels.empty());
  ASSERT_EQ(addmm.input_dims.size(), 5u);
  EXPECT_EQ(addmm.input_dims[1], (std::vector<int64_t>{2048, 1024}));
  EXPECT_TRUE(addmm.input_dims[3].empty());
  EXPECT_EQ(addmm.input_types[0], "c10::BFloat16");
  // The attention kernel has no External id and neither has its launch: the launch's enclosing
  // operator on the thread is found by time.
  const KinetoOp& sdpa = op_named(t, "aten::_scaled_dot_product_flash_attention");
  ASSERT_EQ(sdpa.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[static_cast<size_t>(sdpa.kernels[0])].correlation, 502);
  // The NCCL kernel gets the collective's metadata from its record_param_comms operator.
  const KinetoOp& comms = op_named(t, "record_param_comms");
  ASSERT_EQ(comms.kernels.size(), 1u);
  const KinetoKernel& nccl = t.kernels[static_cast<size_t>(comms.kernels[0])];
  EXPECT_EQ(nccl.stream, 20);
  EXPECT_EQ(nccl.collective, "allreduce");
  EXPECT_EQ(nccl.in_nelems, 1048576);
  EXPECT_EQ(nccl.group_size, 2);
  EXPECT_EQ(nccl.dtype, "BFloat16");
  // The copy is a GPU activity too.
  EXPECT_EQ(t.kernels[static_cast<size_t>(op_named(t, "aten::copy_").kernels[0])].category, "gpu_memcpy");
  // ProfilerStep#3 is only on the CPU: its GPU window runs from the first to the last activity it launched.
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_TRUE(t.steps_annotated);
  EXPECT_EQ(t.steps[0].number, 3);
  EXPECT_EQ(t.steps[0].start, Time::ns(1100000));
  EXPECT_EQ(t.steps[0].end, Time::ns(1410000));
}

TEST(KinetoTrace, WithoutStepsTheWholeTraceIsOneStep) {
  Json j = models::presets::load_json_file(test::kTestData + "kineto_pytorch_shape.json", "t");
  Json events = Json::array();
  for (const Json& e : j["traceEvents"])
    if (e.value("cat", "") != "user_annotation") events.push_back(e);
  j["traceEvents"] = events;
  const KinetoTrace t = parse_kineto_trace(j, "t");
  EXPECT_FALSE(t.steps_annotated);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].start, Time::ns(1100000));
  EXPECT_EQ(t.steps[0].end, Time::ns(1410000));
}

TEST(KinetoTrace, ExampleTraceParsesWithEveryKernelLinked) {
  const auto t0 = std::chrono::steady_clock::now();
  const KinetoTrace t = load_kineto_trace(test::kExampleTrace);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("parsed %s: %zu operators, %zu GPU activities in %.1f ms\n", test::kExampleTrace.c_str(), t.ops.size(),
              t.kernels.size(), ms);
  EXPECT_EQ(t.device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.world_size, 8);
  EXPECT_EQ(t.unlinked_kernels, 0u);
  EXPECT_EQ(t.ops.size(), t.kernels.size());  // export writes one operator per kernel
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].end - t.steps[0].start, Time::ns(t.metadata["iteration_ns"].get<int64_t>()));
  for (const KinetoOp& op : t.ops) EXPECT_EQ(op.kernels.size(), 1u) << op.name;
}

void expect_error(const Json& j, const std::string& fragment) {
  try {
    parse_kineto_trace(j, "trace.json");
    ADD_FAILURE() << "no error for " << fragment;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "trace.json");
    EXPECT_NE(e.message().find(fragment), std::string::npos) << e.message();
  }
}

TEST(KinetoTrace, BadInputIsAOneLineConfigError) {
  expect_error(Json::array(), "no \"traceEvents\" array");
  expect_error(Json{{"traceEvents", Json::object()}}, "no \"traceEvents\" array");
  expect_error(Json{{"traceEvents", Json::array({{{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::mm"}, {"ts", 1}}})}},
               "traceEvents[0].dur: expected a number of microseconds");
  expect_error(Json{{"traceEvents", Json::array({{{"ph", "X"}, {"cat", "kernel"}, {"ts", "1"}, {"dur", 1}}})}},
               "traceEvents[0].ts");
  expect_error(Json{{"traceEvents", Json::array({{{"ph", "X"}, {"cat", "cpu_op"}, {"ts", 1}, {"dur", 1}}})}},
               "no GPU kernels");
  EXPECT_THROW(load_kineto_trace(test::kTestData + "no_such_trace.json"), ConfigError);
  const std::string bad = testing::TempDir() + "kineto_bad.json";
  std::ofstream(bad) << "{\"traceEvents\": [";
  EXPECT_THROW(load_kineto_trace(bad), ConfigError);
}

}  // namespace
}  // namespace trainsim::traces
