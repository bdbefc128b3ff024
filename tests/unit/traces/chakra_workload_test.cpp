// Chakra import (traces/chakra/workload.*): the hand-written example as tasks, streams and
// communicators; compute times kept, rescaled to another GPU or timed by the roofline; nodes
// passed over keep their dependencies; and every error of a trace that cannot be replayed.
#include "traces/chakra/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <sstream>

#include "chakra_test_util.hpp"
#include "models/presets/catalog.hpp"
#include "trace_schema.hpp"
#include "traces/chakra/node.hpp"
#include "traces/chakra/replay.hpp"
#include "traces/sinks/chrome_trace.hpp"

namespace trainsim::traces::chakra {
namespace {

using test::example;
using test::expect_config_error;
using test::replay_job;

Trace in_memory(const std::vector<std::string>& ranks) {
  Trace t;
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::ostringstream name;  // not "r" + to_string(r): GCC 12's -Wrestrict false positive
    name << "r" << r;
    t.ranks.push_back(parse_rank_trace(ranks[r], name.str()));
  }
  return t;
}

models::hardware::GpuSpec gpu(const std::string& name) {
  return models::hardware::parse_gpu(models::presets::find("gpus", name, "gpu"), "gpu");
}

// Compute tasks' durations in task order.
std::vector<sim::Time> compute_times(const ImportedWorkload& iw) {
  std::vector<sim::Time> out;
  for (sim::task::TaskIndex i = 0; i < iw.w.graph.size(); ++i)
    if (iw.w.graph.task(i).spec.category == static_cast<uint8_t>(TaskClass::kCompute))
      out.push_back(iw.w.graph.task(i).spec.duration);
  return out;
}

TEST(ChakraWorkload, HandWrittenExampleBecomesTasks) {
  const Trace t = read_trace(example("hand-dp2"), "--chakra");
  const ImportedWorkload iw = import_workload(t, replay_job("dgx-a100", 2), {});
  const ImportStats& s = iw.stats;
  EXPECT_EQ(s.ranks, 2);
  EXPECT_EQ(s.nodes, 12);
  EXPECT_EQ(s.compute, 4);
  EXPECT_EQ(s.cpu, 2);
  EXPECT_EQ(s.collectives, 1);
  EXPECT_EQ(s.transfers, 1);
  EXPECT_EQ(s.skipped, 2);  // the METADATA_NODE of each rank
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].pg_name, "0");
  EXPECT_EQ(s.groups[0].ranks, (std::vector<int32_t>{0, 1}));
  // 4 GEMMs + 2 CPU ops + 1 all-reduce + 1 send/recv; recorded durations kept (no recorded GPU).
  EXPECT_EQ(iw.w.graph.size(), 8u);
  const auto ct = compute_times(iw);
  EXPECT_EQ(std::count(ct.begin(), ct.end(), sim::Time::us(410)), 1);
  EXPECT_EQ(std::count(ct.begin(), ct.end(), sim::Time::us(205)), 2);
  // The all-reduce spans both ranks' "stream 20"; the transfer sits on the sender's stream only.
  for (sim::task::TaskIndex i = 0; i < iw.w.graph.size(); ++i) {
    const auto& task = iw.w.graph.task(i);
    if (task.spec.kind == sim::task::TaskKind::kCollective) {
      ASSERT_EQ(task.n_streams, 2);
      EXPECT_EQ(iw.w.graph.label(iw.w.graph.stream(iw.w.graph.streams_of(i)[0]).label), "stream 20");
      ASSERT_NE(iw.w.task_comm[i], models::workload::Workload::kNoComm);
      EXPECT_EQ(iw.w.comms[iw.w.task_comm[i]].bytes, sim::Bytes(33554432));
    }
    if (task.spec.kind == sim::task::TaskKind::kP2P) {
      ASSERT_EQ(task.n_streams, 1);
      EXPECT_EQ(iw.w.graph.stream(iw.w.graph.streams_of(i)[0]).rank, 0);
      EXPECT_EQ(iw.w.groups[iw.w.comms[iw.w.task_comm[i]].group], (std::vector<int32_t>{0, 1}));
    }
  }
}

TEST(ChakraWorkload, ReplayFollowsTheDependencies) {
  const Trace t = read_trace(example("hand-dp2"), "--chakra");
  const models::workload::Job job = replay_job("dgx-a100", 2);
  const ReplayResult r = replay(import_workload(t, job, {}), job);
  // Rank 1: CPU op 12 us, GEMM 415 us, the all-reduce (after rank 0's 410 us GEMM), the receive,
  // then its 205 us GEMM: the critical path, plus the two transfers' network time.
  EXPECT_GT(r.iteration, sim::Time::us(12 + 415 + 205));
  EXPECT_LT(r.iteration, sim::Time::us(12 + 415 + 205 + 1000));
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[1].compute, sim::Time::us(415 + 205));
  EXPECT_GT(r.ranks[1].collective, sim::Time::zero());
  EXPECT_GT(r.ranks[1].transfer, sim::Time::zero());
  EXPECT_EQ(r.ranks[1].cpu, sim::Time::us(12));
}

TEST(ChakraWorkload, ReplayTraceFollowsTheTraceSchema) {
  const Trace t = read_trace(example("tiny-gpt-tp2-pp2"), "--chakra");
  const models::workload::Job job = replay_job("dgx-a100", 4);
  std::unique_ptr<ChromeTraceRecorder> recorder;
  ReplayOptions o;
  o.before_run = [&](sim::Engine& e, const models::workload::Workload& w) {
    recorder = std::make_unique<ChromeTraceRecorder>(e, w.graph);
  };
  std::ostringstream os;
  o.after_run = [&](const models::workload::Workload&, const sim::task::TaskExecutor&) { recorder->write(os); };
  const ReplayResult r = replay(import_workload(t, job, {}), job, o);
  const auto doc = nlohmann::json::parse(os.str());
  EXPECT_EQ(testing::trace_schema_errors(doc), std::vector<std::string>{});
  // One complete event per (task, stream): every task of the 4 ranks ran.
  size_t spans = 0;
  for (const auto& e : doc["traceEvents"]) spans += e["ph"] == "X";
  EXPECT_GE(spans, r.tasks);
}

TEST(ChakraWorkload, RescalesComputeToAnotherGpu) {
  const Trace t = read_trace(example("hand-dp2"), "--chakra");
  ImportOptions o;
  o.recorded_gpu = gpu("a100-sxm-80gb");
  const models::workload::Job h100 = replay_job("dgx-h100", 2);
  const ImportedWorkload iw = import_workload(t, h100, o);
  EXPECT_EQ(iw.stats.rescaled, 4);
  // Both GEMMs are compute bound on both GPUs (intensity about 1,365 FLOP/byte), so the ratio is
  // the ratio of the sustained tensor-core rates.
  const double a = roofline_time(*o.recorded_gpu, h100.precision, 68719476736.0, 50331648.0).seconds();
  const double h = roofline_time(h100.gpu, h100.precision, 68719476736.0, 50331648.0).seconds();
  ASSERT_LT(h, a);
  const auto ct = compute_times(iw);
  EXPECT_EQ(std::count(ct.begin(), ct.end(), sim::Time::from_seconds_ceil(410e-6 * h / a)), 1);
  // Recorded on the target GPU itself: times are kept.
  o.recorded_gpu = h100.gpu;
  const ImportedWorkload same = import_workload(t, h100, o);
  EXPECT_EQ(same.stats.rescaled, 0);
  EXPECT_EQ(compute_times(same), compute_times(import_workload(t, h100, {})));
}

TEST(ChakraWorkload, NodesWithoutTimeArePassedOverOrTimedByRoofline) {
  // id 2 (no time, no num_ops) and the metadata node are passed over: 3 still waits for 1.
  const Trace t = in_memory({R"({"id": "1", "type": "COMP_NODE", "durationMicros": "100"}
      {"id": "2", "type": "COMP_NODE", "dataDeps": ["1"]}
      {"id": "5", "type": "METADATA_NODE", "dataDeps": ["2"]}
      {"id": "3", "type": "COMP_NODE", "dataDeps": ["5"], "durationMicros": "50", "attr": [{"name": "stream", "int64Val": "9"}]}
      {"id": "4", "type": "COMP_NODE", "attr": [{"name": "num_ops", "int64Val": "1000000000000"}]})"});
  const models::workload::Job job = replay_job("dgx-a100", 1);
  const ImportedWorkload iw = import_workload(t, job, {});
  EXPECT_EQ(iw.stats.skipped, 2);
  EXPECT_EQ(iw.stats.roofline, 1);
  const ReplayResult r = replay(iw, job);
  // 1 then 3 (on its own stream) take 150 us; 4 (1 TFLOP at the roofline) runs beside them on
  // the default compute stream, after 1.
  const sim::Time roof = roofline_time(job.gpu, job.precision, 1e12, 0) + job.gpu.kernel_launch;
  EXPECT_EQ(r.iteration, std::max(sim::Time::us(150), sim::Time::us(100) + roof));
}

TEST(ChakraWorkload, ErrorsNameTheNode) {
  const models::workload::Job one = replay_job("dgx-a100", 1), two = replay_job("dgx-a100", 2);
  auto import = [](std::vector<std::string> ranks, const models::workload::Job& job) {
    return [ranks, &job] { import_workload(in_memory(ranks), job, {}); };
  };
  const std::string comp = R"({"id": "1", "type": "COMP_NODE", "durationMicros": "10"})";
  expect_config_error(import({R"({"id": "1", "type": "COMP_NODE", "dataDeps": ["2"]}
                                 {"id": "2", "type": "COMP_NODE", "dataDeps": ["1"]})"},
                             one),
                      "r0:id 1", "dependency cycle");
  expect_config_error(
      import({R"({"id": "1", "type": "COMM_COLL_NODE", "attr": [{"name": "comm_type", "int64Val": "0"}]})"}, one),
      "r0:id 1.attr", "needs a comm_size attribute");
  expect_config_error(
      import({R"({"id": "1", "type": "COMM_COLL_NODE", "attr": [{"name": "comm_size", "int64Val": "8"}]})"}, one),
      "r0:id 1.attr", "needs a comm_type attribute");
  expect_config_error(import({R"({"id": "1", "type": "COMM_COLL_NODE", "attr": [{"name": "comm_type", "int64Val": "3"},
                                 {"name": "comm_size", "int64Val": "8"}]})"},
                             one),
                      "r0:id 1.attr.comm_type", "collective GATHER is not simulated");
  expect_config_error(import({R"({"id": "1", "type": "COMM_COLL_NODE", "attr": [{"name": "comm_type", "int64Val": "12"},
                                 {"name": "comm_size", "int64Val": "8"}]})"},
                             one),
                      "r0:id 1.attr.comm_type", "unknown collective type");
  expect_config_error(import({R"({"id": "1", "type": "STORAGE_NODE"})"}, one), "r0:id 1.type",
                      "STORAGE_NODE nodes are not simulated");
  expect_config_error(
      import({R"({"id": "1", "type": "COMM_SEND_NODE", "attr": [{"name": "comm_size", "int64Val": "8"}]})"}, one),
      "r0:id 1.attr", "needs a comm_dst attribute");
  expect_config_error(import({R"({"id": "1", "type": "COMM_SEND_NODE", "attr": [{"name": "comm_size", "int64Val": "8"},
                                 {"name": "comm_dst", "int32Val": 1}]})"},
                             one),
                      "r0:id 1.attr.comm_dst", "rank 1 is not in the trace");
  expect_config_error(import({R"({"id": "1", "type": "COMM_SEND_NODE", "attr": [{"name": "comm_size", "int64Val": "8"},
                                 {"name": "comm_dst", "int32Val": 1}]})",
                              comp},
                             two),
                      "r0:id 1", "no matching COMM_RECV_NODE on rank 1 (tag 0)");
  expect_config_error(import({R"({"id": "1", "type": "COMM_SEND_NODE", "attr": [{"name": "comm_size", "int64Val": "8"},
                                 {"name": "comm_dst", "int32Val": 1}]})",
                              R"({"id": "1", "type": "COMM_RECV_NODE", "attr": [{"name": "comm_size", "int64Val": "16"},
                                 {"name": "comm_src", "int32Val": 0}]})"},
                             two),
                      "r1:id 1.attr.comm_size", "moves 16 bytes but its matching COMM_SEND_NODE");
  const std::string ar = R"({"id": "1", "type": "COMM_COLL_NODE", "attr": [{"name": "comm_type", "int64Val": "0"},
                            {"name": "comm_size", "int64Val": "1024"}, {"name": "pg_name", "stringVal": "3"}]})";
  const std::string ag = R"({"id": "1", "type": "COMM_COLL_NODE", "attr": [{"name": "comm_type", "int64Val": "2"},
                            {"name": "comm_size", "int64Val": "1024"}, {"name": "pg_name", "stringVal": "3"}]})";
  expect_config_error(import({ar, ag}, two), "r1:id 1",
                      "collective #0 on process group \"3\" is ALL_GATHER of 1024 bytes here but ALL_REDUCE");
  // Without pg_name a collective spans every rank: rank 1 must issue it too.
  expect_config_error(import({R"({"id": "1", "type": "COMM_COLL_NODE", "attr": [{"name": "comm_type", "int64Val": "0"},
                                 {"name": "comm_size", "int64Val": "8"}]})",
                              comp},
                             two),
                      "r1", "rank 1 issues 0 collectives on the world (no pg_name) but rank 0 issues 1");
  // Two groups issued in opposite orders on the two ranks: NCCL would hang, so does the import.
  const std::string ab = R"({"id": "1", "type": "COMM_COLL_NODE", "attr": [{"name": "comm_type", "int64Val": "0"},
                            {"name": "comm_size", "int64Val": "8"}, {"name": "pg_name", "stringVal": "a"}]}
                            {"id": "2", "type": "COMM_COLL_NODE", "dataDeps": ["1"], "attr": [{"name": "comm_type", "int64Val": "0"},
                            {"name": "comm_size", "int64Val": "8"}, {"name": "pg_name", "stringVal": "b"}]})";
  const std::string ba = R"({"id": "1", "type": "COMM_COLL_NODE", "attr": [{"name": "comm_type", "int64Val": "0"},
                            {"name": "comm_size", "int64Val": "8"}, {"name": "pg_name", "stringVal": "b"}]}
                            {"id": "2", "type": "COMM_COLL_NODE", "dataDeps": ["1"], "attr": [{"name": "comm_type", "int64Val": "0"},
                            {"name": "comm_size", "int64Val": "8"}, {"name": "pg_name", "stringVal": "a"}]})";
  expect_config_error(import({ab, ba}, two), "r0:id", "deadlock");
  // More ranks than the cluster has GPUs.
  models::workload::Job small = two;
  small.cluster.max_gpus = 1;
  expect_config_error(import({comp, comp}, small), "--chakra",
                      "the trace has 2 ranks (one per file) but cluster \"dgx-a100\" holds at most 1 GPUs");
}

}  // namespace
}  // namespace trainsim::traces::chakra
