#include "models/workload/run/breakdown.hpp"

#include <gtest/gtest.h>

#include "sim/engine.hpp"
#include "sim/task/executor.hpp"

namespace trainsim::models::workload {
namespace {

using sim::task::TaskIndex;
using sim::task::TaskSpec;

TaskSpec task(int64_t ns, Category c = Category::kCompute, double flops = 0) {
  TaskSpec s;
  s.duration = sim::Time::ns(ns);
  s.category = static_cast<uint8_t>(c);
  s.flops = sim::Flops(flops);
  return s;
}

// One rank's four streams with hand-placed intervals (a helper stream of another rank delays
// tasks to the wanted start times):
//   compute  [0,10) C1 (100 FLOPs)               [30,40) C2 (recompute, 23 FLOPs)
//   tp            [5,20) T1
//   pp                 [15,25) P1
//   dp                       [22,35) D1
// Attribution, priority compute > tp > pp > dp, idle = bubble, up to end = 50:
//   [0,10) compute, [10,20) tp, [20,25) pp, [25,30) dp, [30,40) compute, [40,50) bubble.
TEST(Breakdown, AttributesEveryInstantToOneCause) {
  Workload w;
  auto& g = w.graph;
  RankInfo r;
  r.compute = g.add_stream(0, "compute");
  r.tp = g.add_stream(0, "tp");
  r.dp = g.add_stream(0, "dp");
  r.pp = g.add_stream(0, "pp");
  w.ranks.push_back(r);
  const auto timer = g.add_stream(1, "timer");
  const TaskIndex a0 = g.add(task(5), timer), a1 = g.add(task(10), timer), a2 = g.add(task(7), timer),
                  a3 = g.add(task(8), timer);  // ends at 5, 15, 22, 30
  g.add(task(10, Category::kCompute, 100), r.compute);
  const TaskIndex t1 = g.add(task(15, Category::kTpComm), r.tp);
  const TaskIndex p1 = g.add(task(10, Category::kPpComm), r.pp);
  const TaskIndex d1 = g.add(task(13, Category::kDpComm), r.dp);
  const TaskIndex c2 = g.add(task(10, Category::kRecompute, 23), r.compute);
  g.add_dep(a0, t1);
  g.add_dep(a1, p1);
  g.add_dep(a2, d1);
  g.add_dep(a3, c2);
  g.finalize();
  sim::Engine engine;
  sim::task::TaskExecutor exec(engine, g);
  ASSERT_EQ(exec.run(), sim::Time::ns(40));
  const TimeBreakdown b = rank_breakdown(w, exec, 0, sim::Time::ns(50));
  EXPECT_EQ(b.compute, sim::Time::ns(20));
  EXPECT_EQ(b.recompute, sim::Time::ns(10));
  EXPECT_EQ(b.tp_exposed, sim::Time::ns(10));
  EXPECT_EQ(b.pp_exposed, sim::Time::ns(5));
  EXPECT_EQ(b.dp_exposed, sim::Time::ns(5));
  EXPECT_EQ(b.bubble, sim::Time::ns(10));
  EXPECT_DOUBLE_EQ(b.flops.count(), 123.0);
  EXPECT_EQ(b.compute + b.tp_exposed + b.pp_exposed + b.dp_exposed + b.bubble, sim::Time::ns(50));

  const auto j = b.to_json();
  EXPECT_DOUBLE_EQ(j.at("tp_exposed_s").get<double>(), 10e-9);
  EXPECT_DOUBLE_EQ(j.at("bubble_s").get<double>(), 10e-9);
  EXPECT_EQ(j.size(), 10u);  // + cp, ep and host-copy exposure and host syncs (0 here: no such streams)
  EXPECT_EQ(j.at("host_sync_s").get<double>(), 0.0);
  EXPECT_EQ(j.at("cp_exposed_s").get<double>(), 0.0);
}

TEST(Breakdown, FullyHiddenCommunicationIsNotExposed) {
  // A TP transfer entirely under a compute task, and a DP reduction entirely under a TP one.
  Workload w;
  auto& g = w.graph;
  RankInfo r;
  r.compute = g.add_stream(0, "compute");
  r.tp = g.add_stream(0, "tp");
  r.dp = g.add_stream(0, "dp");
  r.pp = g.add_stream(0, "pp");
  w.ranks.push_back(r);
  g.add(task(100), r.compute);               // [0,100)
  g.add(task(60, Category::kTpComm), r.tp);  // [0,60)
  g.add(task(30, Category::kDpComm), r.dp);  // [0,30)
  g.finalize();
  sim::Engine engine;
  sim::task::TaskExecutor exec(engine, g);
  const sim::Time end = exec.run();
  const TimeBreakdown b = rank_breakdown(w, exec, 0, end);
  EXPECT_EQ(b.compute, sim::Time::ns(100));
  EXPECT_EQ(b.tp_exposed + b.pp_exposed + b.dp_exposed + b.bubble, sim::Time::zero());
}

}  // namespace
}  // namespace trainsim::models::workload
