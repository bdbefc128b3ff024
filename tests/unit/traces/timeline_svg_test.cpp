#include "traces/svg/timeline.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/engine.hpp"
#include "sim/task/executor.hpp"

namespace trainsim::traces {
namespace {

using sim::Engine;
using sim::Time;
using sim::task::StreamId;
using sim::task::TaskExecutor;
using sim::task::TaskGraph;
using sim::task::TaskIndex;
using sim::task::TaskKind;
using sim::task::TaskSpec;

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

std::string group(const std::string& s, const std::string& cls) {
  const size_t a = s.find("<g class=\"" + cls + "\">");
  const size_t b = s.find("</g>", a);
  return a == std::string::npos ? "" : s.substr(a, b - a);
}

// Two pipeline stages: rank 0 runs fwd then waits (a bubble) for rank 1's fwd+bwd via pp sends,
// then runs its bwd; a tp all-reduce on rank 0. 4 streams, 7 task placements.
struct Job {
  TaskGraph g;
  Engine engine;
  std::unique_ptr<TaskExecutor> exec;
  Time makespan;
  Job() {
    const StreamId c0 = g.add_stream(0, "compute"), p0 = g.add_stream(0, "pp"), t0 = g.add_stream(0, "tp");
    const StreamId c1 = g.add_stream(1, "compute");
    auto task = [&](TaskKind k, const char* label, int64_t us, std::vector<StreamId> s) {
      TaskSpec t;
      t.kind = k;
      t.label = g.intern(label);
      t.duration = Time::us(us);
      return g.add(t, s);
    };
    const TaskIndex f0 = task(TaskKind::kCompute, "mlp_fwd", 100, {c0});
    const TaskIndex ar = task(TaskKind::kCollective, "tp_all_reduce", 20, {t0});
    const TaskIndex send = task(TaskKind::kP2P, "pp_send_activation", 10, {p0});
    const TaskIndex f1 = task(TaskKind::kCompute, "mlp_fwd", 100, {c1});
    const TaskIndex b1 = task(TaskKind::kCompute, "mlp_dgrad", 200, {c1});
    const TaskIndex r1 = task(TaskKind::kCompute, "recompute_mlp", 50, {c1});
    const TaskIndex b0 = task(TaskKind::kCompute, "mlp_dgrad", 200, {c0});
    g.add_dep(f0, ar);
    g.add_dep(ar, send);
    g.add_dep(send, f1);
    g.add_dep(f1, b1);
    g.add_dep(b1, r1);
    g.add_dep(r1, b0);
    g.finalize();
    exec = std::make_unique<TaskExecutor>(engine, g);
    makespan = exec->run();
  }
};

TEST(TimelineSvg, OneRowPerStreamOneBarPerTaskAxisSpansTheIteration) {
  Job job;
  TimelineOptions o;
  o.title = "two stages";
  TimelineStats st;
  const std::string s = timeline_svg(job.g, *job.exec, o, &st);
  EXPECT_EQ(st.rows, 4u);
  EXPECT_EQ(count(group(s, "rows"), "class=\"row\""), 4u);
  EXPECT_EQ(st.tasks, 7u);
  EXPECT_EQ(st.rects, 7u);
  EXPECT_EQ(count(group(s, "tasks"), "<rect"), 7u);
  EXPECT_EQ(st.span_ns, job.makespan.count_ns());
  EXPECT_EQ(job.makespan, Time::us(680));
  // 680 us: axis in us, ticks up to 600 with the frame ending at 680.
  EXPECT_NE(s.find("time (us)"), std::string::npos);
  EXPECT_NE(s.find(">600</text>"), std::string::npos);
  for (const char* label : {"forward", "backward", "recompute", "TP communication", "PP send/recv"})
    EXPECT_NE(group(s, "legend").find(label), std::string::npos) << label;
  EXPECT_NE(s.find("rank 1 compute"), std::string::npos);
  EXPECT_EQ(s.substr(s.size() - 7), "</svg>\n");
}

TEST(TimelineSvg, Deterministic) {
  Job a, b;
  EXPECT_EQ(timeline_svg(a.g, *a.exec, {}), timeline_svg(b.g, *b.exec, {}));
}

TEST(TimelineSvg, MergesTasksShorterThanAPixelUnderTheCap) {
  TaskGraph g;
  const StreamId c = g.add_stream(0, "compute");
  TaskSpec t;
  t.label = g.intern("mlp_fwd");
  t.duration = Time::ns(10);
  for (int i = 0; i < 100000; ++i) g.add(t, c);
  g.finalize();
  Engine engine;
  TaskExecutor exec(engine, g);
  exec.run();
  TimelineOptions o;
  o.max_rects = 100;
  TimelineStats st;
  const std::string s = timeline_svg(g, exec, o, &st);
  EXPECT_EQ(st.tasks, 100000u);
  EXPECT_LE(st.rects, 100u);
  EXPECT_EQ(count(group(s, "tasks"), "<rect"), st.rects);
}

TEST(TimelineSvg, CategoriesFromLabels) {
  EXPECT_EQ(timeline_category(TaskKind::kCompute, "attn_fwd"), TimelineCategory::kForward);
  EXPECT_EQ(timeline_category(TaskKind::kCompute, "attn_wgrad"), TimelineCategory::kBackward);
  EXPECT_EQ(timeline_category(TaskKind::kCompute, "recompute_attn"), TimelineCategory::kRecompute);
  EXPECT_EQ(timeline_category(TaskKind::kCompute, "optimizer_step"), TimelineCategory::kOptimizer);
  EXPECT_EQ(timeline_category(TaskKind::kCollective, "dp_grad_reduce"), TimelineCategory::kDp);
  EXPECT_EQ(timeline_category(TaskKind::kCollective, "zero3_param_all_gather"), TimelineCategory::kDp);
  EXPECT_EQ(timeline_category(TaskKind::kP2P, "pp_send_gradient"), TimelineCategory::kPp);
  EXPECT_EQ(timeline_category(TaskKind::kP2P, "cp_ring_kv_send"), TimelineCategory::kCp);
  EXPECT_EQ(timeline_category(TaskKind::kMemory, "offload_grads_d2h"), TimelineCategory::kMemory);
}

}  // namespace
}  // namespace trainsim::traces
