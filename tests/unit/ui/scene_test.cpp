#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "models/workload/run/simulate.hpp"
#include "sim/error.hpp"
#include "traces/sinks/chrome_trace.hpp"
#include "traces/sinks/memory_slots.hpp"
#include "ui/scene/plan_table.hpp"
#include "ui/scene/simulate_scene.hpp"
#include "ui/scene/trace_scene.hpp"

namespace trainsim::ui {
namespace {

using sim::config::Json;

// LLaMA-3.2-1B on two DGX H100 (16 GPUs): TP 2, PP 2, DP 4, 8 micro-batches per pipeline.
models::workload::Job small_job() {
  const Json j = {{"model", "llama3.2-1b"}, {"cluster", "dgx-h100"}, {"gpus", 16},     {"tp", 2}, {"pp", 2},
                  {"micro_batch", 1},       {"global_batch", 32},    {"seq_len", 2048}};
  return models::workload::resolve_job(models::workload::parse_job(j));
}

const Scene& shared_scene() {
  static const Scene scene = simulate_scene(small_job());
  return scene;
}

TEST(SimulateScene, RowsPerRankAndStreamWithStages) {
  const Scene& s = shared_scene();
  std::map<int32_t, std::set<std::string>> streams;
  for (const SceneRow& r : s.rows) streams[r.rank].insert(r.stream);
  ASSERT_EQ(streams.size(), 2u);  // one representative rank per stage
  for (const auto& [rank, names] : streams)
    for (const char* want : {"compute", "tp", "dp", "pp"}) EXPECT_TRUE(names.count(want)) << rank << " " << want;
  std::set<int32_t> stages;
  for (const SceneRow& r : s.rows) stages.insert(r.stage);
  EXPECT_EQ(stages, (std::set<int32_t>{0, 1}));
  EXPECT_EQ(s.gpus, 16);
  EXPECT_NE(s.title.find("llama3.2-1b"), std::string::npos);
}

TEST(SimulateScene, TasksSortedPerRowAndSpanIsTheIteration) {
  const Scene& s = shared_scene();
  ASSERT_EQ(s.row_begin.size(), s.rows.size() + 1);
  EXPECT_EQ(s.row_begin.back(), s.tasks.size());
  for (uint32_t r = 0; r < s.rows.size(); ++r)
    for (uint32_t i = s.row_begin[r]; i < s.row_begin[r + 1]; ++i) {
      EXPECT_EQ(s.tasks[i].row, r);
      EXPECT_LE(s.tasks[i].start_ns, s.tasks[i].end_ns);
      if (i > s.row_begin[r]) {
        EXPECT_LE(s.tasks[i - 1].start_ns, s.tasks[i].start_ns);
      }
    }
  EXPECT_NEAR(static_cast<double>(s.span_ns) / 1e9, s.iteration_s, 1e-9);
  EXPECT_GT(s.mfu, 0.0);
}

// The headline utilization names its peak: BF16 always (mfu), and an FP8 job's against the FP8
// peak beside it (models/compute/peaks.hpp); the plans table's column says BF16.
TEST(SimulateScene, UtilizationNamesItsPeak) {
  EXPECT_TRUE(shared_scene().mfu_low_peak.empty());
  EXPECT_EQ(shared_scene().mfu_low, 0.0);
  const Json j = {{"model", "llama3.2-1b"}, {"cluster", "dgx-h100"}, {"gpus", 8},       {"tp", 2},
                  {"micro_batch", 1},       {"global_batch", 8},     {"seq_len", 2048}, {"precision", "fp8"},
                  {"network", "analytic"}};
  const Scene fp8 = simulate_scene(models::workload::resolve_job(models::workload::parse_job(j)));
  EXPECT_EQ(fp8.mfu_low_peak, "FP8");
  EXPECT_GT(fp8.mfu_low, 0.0);
  EXPECT_LT(fp8.mfu_low, fp8.mfu);  // the FP8 peak is the higher one
  EXPECT_NE(std::string(to_string(PlanColumn::kMfu)).find("BF16"), std::string::npos);
}

// The critical path ends with the last task, never overlaps itself, and, in a pipeline that
// synchronises on gradient reduction, explains most of the iteration.
TEST(SimulateScene, CriticalPathIsAChainEndingTheIteration) {
  const Scene& s = shared_scene();
  ASSERT_TRUE(s.has_critical_path);
  std::map<uint32_t, std::pair<int64_t, int64_t>> path;  // task -> (start, end)
  bool last_on_path = false;
  for (const SceneTask& t : s.tasks)
    if (t.critical) {
      path[t.task] = {t.start_ns, t.end_ns};
      if (t.end_ns == s.span_ns) last_on_path = true;
    }
  ASSERT_GE(path.size(), 10u);
  EXPECT_TRUE(last_on_path);
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const auto& [task, span] : path) spans.push_back(span);
  std::sort(spans.begin(), spans.end());
  int64_t covered = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (i) {
      EXPECT_LE(spans[i - 1].second, spans[i].first) << "path tasks overlap";
    }
    covered += spans[i].second - spans[i].first;
  }
  const double share = static_cast<double>(covered) / static_cast<double>(s.span_ns);
  std::printf("critical path: %zu tasks, %.1f%% of the iteration busy\n", path.size(), 100 * share);
  EXPECT_GT(share, 0.5);
}

TEST(SimulateScene, MemoryRisesWithActivationsAndReturns) {
  const Scene& s = shared_scene();
  ASSERT_EQ(s.memory.size(), 2u);
  std::vector<int64_t> held;  // peak activations above the static part (what is left at the end)
  for (const MemoryTrack& m : s.memory) {
    ASSERT_FALSE(m.points.empty());
    EXPECT_EQ(m.points.front().first, 0);
    int64_t low = m.points.front().second;
    for (const auto& [t, b] : m.points) low = std::min(low, b);
    EXPECT_EQ(m.points.back().second, low);  // every activation freed by the end
    EXPECT_GT(m.peak(), low);
    EXPECT_GT(m.capacity_bytes, m.peak());
    held.push_back(m.peak() - low);
  }
  // 1F1B: stage 0 holds pp = 2 micro-batches in flight at its peak, the last stage one.
  EXPECT_EQ(held[0], 2 * held[1]);
}

TEST(SimulateScene, TopologyAndLinkUtilization) {
  const Scene& s = shared_scene();
  EXPECT_EQ(s.topology, "rail_optimized");
  EXPECT_GE(s.nodes.size(), 16u);
  ASSERT_TRUE(s.link_utilization);
  float hottest = 0;
  for (const TopoLink& l : s.links) {
    ASSERT_EQ(l.utilization.size(), 100u);
    for (float u : l.utilization) {
      EXPECT_GE(u, 0.f);
      EXPECT_LE(u, 1.f);
    }
    hottest = std::max(hottest, l.mean_utilization());
  }
  EXPECT_GT(hottest, 0.f);
  // Without flow recording the schedule is the same and links carry nothing.
  SceneOptions fast;
  fast.link_utilization = false;
  const Scene quick = simulate_scene(small_job(), fast);
  EXPECT_FALSE(quick.link_utilization);
  EXPECT_EQ(quick.tasks.size(), s.tasks.size());
  EXPECT_NEAR(quick.iteration_s, s.iteration_s, 1e-3 * s.iteration_s);
}

// A GB200 NVL72 job of 100 GPUs: the topology builds two whole racks (144 GPUs), drawn as racks
// of 18 trays with the 44 GPUs the job leaves idle marked unused.
TEST(SimulateScene, Nvl72JobDrawsRacksWithItsUnusedGpus) {
  const Json j = {{"model", "llama3.2-1b"}, {"cluster", "gb200-nvl72"}, {"gpus", 100},    {"tp", 4}, {"pp", 1},
                  {"micro_batch", 1},       {"global_batch", 100},      {"seq_len", 2048}};
  const auto job = models::workload::resolve_job(models::workload::parse_job(j));
  SceneOptions fast;
  fast.link_utilization = false;
  const Scene s = simulate_scene(job, fast);
  ASSERT_EQ(s.racks.size(), 2u) << s.topology << " " << s.nodes.size();
  EXPECT_EQ(s.racks[0].label, "NVL72 rack 0 (72 GPUs)");
  EXPECT_EQ(s.racks[1].label, "NVL72 rack 1 (72 GPUs, 28 used)");
  EXPECT_EQ(s.racks[1].trays.size(), 18u);
  size_t gpus = 0, unused = 0;
  for (const TopoNode& n : s.nodes)
    if (n.kind == topology::NodeKind::kGpu) {
      ++gpus;
      unused += !n.used;
      EXPECT_GE(n.tray, 0);
    }
  EXPECT_EQ(gpus, 144u);
  EXPECT_EQ(unused, 44u);
}

TEST(SimulateScene, PlanThatDoesNotFitIsAPlanError) {
  const Json j = {{"model", "llama3-70b"}, {"cluster", "dgx-h100"}, {"gpus", 8},      {"tp", 8},
                  {"micro_batch", 4},      {"global_batch", 8},     {"seq_len", 8192}};
  const auto job = models::workload::resolve_job(models::workload::parse_job(j));
  EXPECT_THROW(simulate_scene(job), PlanError);
}

// The trace `trainsim simulate --trace` writes loads back into the same rows, tasks and memory.
TEST(TraceScene, RoundTripOfTrainsimsOwnTrace) {
  const models::workload::Job job = small_job();
  models::workload::SimulateOptions opt;
  std::unique_ptr<traces::ChromeTraceRecorder> rec;
  const std::string file = ::testing::TempDir() + "ui_round_trip.trace.json";
  opt.before_run = [&](sim::Engine& e, const models::workload::Workload& w) {
    rec = std::make_unique<traces::ChromeTraceRecorder>(e, w.graph);
    rec->set_memory(&w.memory_events, traces::memory_slots(job, w));
  };
  opt.after_run = [&](const models::workload::Workload&, const sim::task::TaskExecutor&) { rec->write_file(file); };
  models::workload::simulate(job, opt);
  const Scene t = load_trace_scene(file);
  SceneOptions fast;
  fast.link_utilization = false;
  const Scene s = simulate_scene(job, fast);
  EXPECT_EQ(t.rows.size(), s.rows.size());
  EXPECT_EQ(t.tasks.size(), s.tasks.size());
  EXPECT_NEAR(static_cast<double>(t.span_ns), static_cast<double>(s.span_ns), 1.0);  // the trace keeps ns
  ASSERT_EQ(t.memory.size(), s.memory.size());
  for (size_t k = 0; k < t.memory.size(); ++k) EXPECT_EQ(t.memory[k].peak(), s.memory[k].peak());
  for (size_t r = 0; r < t.rows.size(); ++r) EXPECT_EQ(t.rows[r].stream, s.rows[r].stream);
  // Labels lose the " mbN" / " LN" suffixes: the same label set.
  std::set<std::string> a(t.labels.begin(), t.labels.end()), b(s.labels.begin(), s.labels.end());
  EXPECT_EQ(a, b);
  EXPECT_FALSE(t.has_critical_path);
}

// A PyTorch profiler trace: GPU kernels (compute and NCCL) kept, CPU ops dropped, absolute
// timestamps moved to start at 0.
TEST(TraceScene, KinetoKernelsBecomeRows) {
  const Json trace = {
      {"traceEvents",
       {{{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::mm"}, {"pid", 1}, {"tid", 1}, {"ts", 1000.0}, {"dur", 50.0}},
        {{"ph", "X"},
         {"cat", "kernel"},
         {"name", "sm90_xmma_gemm_bf16"},
         {"pid", 0},
         {"tid", 7},
         {"ts", 1010.0},
         {"dur", 40.0}},
        {{"ph", "X"},
         {"cat", "kernel"},
         {"name", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"},
         {"pid", 0},
         {"tid", 20},
         {"ts", 1060.0},
         {"dur", 100.0}},
        {{"ph", "M"}, {"name", "thread_name"}, {"pid", 0}, {"tid", 7}, {"args", {{"name", "stream 7"}}}}}}};
  const Scene s = trace_scene(trace, "k.json");
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(s.rows[0].stream, "stream 7");
  ASSERT_EQ(s.tasks.size(), 2u);
  EXPECT_EQ(s.tasks[0].start_ns, 0);
  EXPECT_EQ(s.tasks[1].start_ns, 50000);
  EXPECT_EQ(s.span_ns, 150000);
  EXPECT_EQ(s.labels[s.tasks[1].label], "nccl AllReduce");
  EXPECT_NE(s.tasks[0].category, s.tasks[1].category);
}

// Older Kineto versions write string tids ("stream 7"); metadata may lack pid/tid; timestamps are
// absolute microseconds since the epoch. Rows stay apart; times are relative to the first task.
// (A double holds epoch microseconds to 0.25 us, as in every reader of these files: the offsets
// here are multiples of it.)
TEST(TraceScene, StringTidsAbsoluteTimesAndSparseMetadata) {
  const double t0 = 1.7e15;  // microseconds since the epoch
  const Json trace = {
      {"traceEvents",
       {{{"ph", "M"}, {"name", "thread_name"}, {"args", {{"name", "orphan"}}}},
        {{"ph", "M"}, {"name", "process_name"}, {"pid", 0}, {"args", {{"name", "rank 3"}}}},
        {{"ph", "X"}, {"cat", "kernel"}, {"name", "gemm"}, {"pid", 0}, {"tid", "stream 7"}, {"ts", t0}, {"dur", 0.5}},
        {{"ph", "X"},
         {"cat", "kernel"},
         {"name", "gemm"},
         {"pid", 0},
         {"tid", "stream 8"},
         {"ts", t0 + 0.25},
         {"dur", 0.5}},
        {{"ph", "X"},
         {"cat", "kernel"},
         {"name", "gemm"},
         {"pid", "host"},
         {"tid", 1},
         {"ts", t0 + 1.001},
         {"dur", 1.0}}}}};
  const Scene s = trace_scene(trace, "old.json");
  ASSERT_EQ(s.rows.size(), 3u);
  EXPECT_EQ(s.rows[0].stream, "thread stream 7");
  EXPECT_EQ(s.rows[1].stream, "thread stream 8");
  EXPECT_EQ(s.rows[0].rank, 3);
  ASSERT_EQ(s.tasks.size(), 3u);
  EXPECT_EQ(s.tasks[0].start_ns, 0);
  EXPECT_EQ(s.tasks[0].end_ns, 500);
  EXPECT_EQ(s.tasks[1].start_ns, 250);
  EXPECT_EQ(s.tasks[2].start_ns, 1000);
  EXPECT_EQ(s.span_ns, 2000);
}

// Both directions of a link counter draw as one line, the busier direction per bin.
TEST(TraceScene, LinkCountersMergeDirections) {
  const Json trace = {
      {"traceEvents",
       {{{"ph", "X"}, {"cat", "compute"}, {"name", "a"}, {"pid", 0}, {"tid", 0}, {"ts", 0.0}, {"dur", 100.0}},
        {{"ph", "C"}, {"pid", 9}, {"ts", 0.0}, {"name", "link gpu0->leaf0 ib"}, {"args", {{"utilization", 0.25}}}},
        {{"ph", "C"}, {"pid", 9}, {"ts", 50.0}, {"name", "link gpu0->leaf0 ib"}, {"args", {{"utilization", 0.0}}}},
        {{"ph", "C"}, {"pid", 9}, {"ts", 0.0}, {"name", "link leaf0->gpu0 ib"}, {"args", {{"utilization", 0.5}}}},
        {{"ph", "C"}, {"pid", 9}, {"ts", 50.0}, {"name", "link leaf0->gpu0 ib"}, {"args", {{"utilization", 0.75}}}}}}};
  const Scene s = trace_scene(trace, "links.json");
  ASSERT_EQ(s.nodes.size(), 2u);
  ASSERT_EQ(s.links.size(), 1u);
  EXPECT_FLOAT_EQ(s.links[0].utilization.front(), 0.5f);
  EXPECT_FLOAT_EQ(s.links[0].utilization.back(), 0.75f);
  EXPECT_NEAR(s.links[0].utilization_in(0, s.span_ns / 2, s.span_ns), 0.5f, 1e-6);
}

TEST(TraceScene, BadFilesAreConfigErrors) {
  EXPECT_THROW(trace_scene(Json{{"model", "x"}}, "job.json"), ConfigError);
  EXPECT_THROW(trace_scene(Json{{"traceEvents", Json::array()}}, "empty.json"), ConfigError);
  EXPECT_THROW(trace_scene(Json{{"traceEvents", 3}}, "bad.json"), ConfigError);
  EXPECT_THROW(load_trace_scene("/nonexistent/trace.json"), ConfigError);
  try {
    trace_scene(Json{{"traceEvents", Json::array()}}, "empty.json");
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "empty.json.traceEvents");
  }
}

// Numbers past int64 (found by fuzz_trace: a pid of 4e115 was cast to int64, undefined): an id
// becomes text, a time or an argument out of range is an error naming the event.
TEST(TraceScene, NumbersPastInt64) {
  const Json huge_pid = {
      {"traceEvents",
       {{{"ph", "X"}, {"cat", "compute"}, {"name", "a"}, {"pid", 4.2e115}, {"tid", 0}, {"ts", 0.0}, {"dur", 10.0}}}}};
  const Scene s = trace_scene(huge_pid, "pid.json");
  EXPECT_EQ(s.tasks.size(), 1u);
  const Json far = {
      {"traceEvents",
       {{{"ph", "X"}, {"cat", "compute"}, {"name", "a"}, {"pid", 0}, {"tid", 0}, {"ts", 0.0}, {"dur", 1.0}},
        {{"ph", "X"}, {"cat", "compute"}, {"name", "b"}, {"pid", 0}, {"tid", 0}, {"ts", 1e300}, {"dur", 1.0}}}}};
  try {
    (void)trace_scene(far, "far.json");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "far.json.traceEvents[1].ts");
  }
  const Json bytes = {{"traceEvents",
                       {{{"ph", "X"},
                         {"cat", "p2p"},
                         {"name", "s"},
                         {"pid", 0},
                         {"tid", 0},
                         {"ts", 0.0},
                         {"dur", 1.0},
                         {"args", {{"bytes", 1e30}}}}}}};
  EXPECT_THROW((void)trace_scene(bytes, "bytes.json"), ConfigError);
}

TEST(Scene, TaskAtAndIdleShare) {
  Scene s;
  s.rows = {{0, 0, "compute"}};
  s.labels = {"a"};
  s.tasks = {{0, 10, 0, 0}, {20, 30, 0, 0}, {30, 40, 0, 0}};
  s.index_rows();
  EXPECT_EQ(s.span_ns, 40);
  EXPECT_EQ(s.task_at(0, 5), 0);
  EXPECT_EQ(s.task_at(0, 15), -1);    // a bubble
  EXPECT_EQ(s.task_at(0, 14, 5), 0);  // within the slack of the first, nearer than the second
  EXPECT_EQ(s.task_at(0, 35), 2);
  EXPECT_EQ(s.task_at(1, 5), -1);  // no such row
  EXPECT_DOUBLE_EQ(s.idle_share(0), 0.25);
}

}  // namespace
}  // namespace trainsim::ui
