#include "models/schedules/schedule.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "sim/engine.hpp"
#include "sim/error.hpp"
#include "sim/task/executor.hpp"
#include "sim/task/task_graph.hpp"

namespace trainsim::models::schedules {
namespace {

TEST(ScheduleRegistry, ListsEveryScheduleAndRejectsUnknownNames) {
  const auto names = ScheduleRegistry::instance().names();
  EXPECT_EQ(names, (std::vector<std::string>{"1f1b", "gpipe", "interleaved"}));
  try {
    ScheduleRegistry::instance().get("interleave", "schedule");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "schedule: unknown pipeline schedule \"interleave\" (did you mean \"interleaved\"? valid: 1f1b, gpipe, "
              "interleaved)");
  }
}

struct Shape {
  int p, m, v;
};

// Runs a schedule with F = 1 and B = 2 time units per chunk on a tiny DAG (one stream per
// stage, F(k) after F(k-1), B(k) after B(k+1), the loss joins F and B of the last virtual
// stage) and returns per-stage busy time and the makespan. A deadlock throws.
struct Timeline {
  int64_t makespan = 0;
  std::vector<int64_t> busy;
};
Timeline run(const StageOrders& o, int p, int v, int64_t f = 1, int64_t b = 2) {
  sim::task::TaskGraph g;
  std::map<std::tuple<int, int, int>, sim::task::TaskIndex> id;  // (type, virtual stage, mb)
  std::vector<sim::task::StreamId> streams;
  for (int s = 0; s < p; ++s) streams.push_back(g.add_stream(s, "compute"));
  for (int s = 0; s < p; ++s)
    for (const Op& op : o[static_cast<size_t>(s)]) {
      sim::task::TaskSpec spec;
      spec.duration = sim::Time::ns(op.type == OpType::kF ? f : b);
      id[{static_cast<int>(op.type), op.chunk * p + s, op.microbatch}] = g.add(spec, streams[static_cast<size_t>(s)]);
    }
  const int vs_last = p * v - 1;
  for (const auto& [key, t] : id) {
    const auto [type, vs, mb] = key;
    if (type == static_cast<int>(OpType::kF) && vs > 0) g.add_dep(id.at({type, vs - 1, mb}), t);
    if (type == static_cast<int>(OpType::kB)) {
      if (vs < vs_last) g.add_dep(id.at({type, vs + 1, mb}), t);
      if (vs == vs_last) g.add_dep(id.at({static_cast<int>(OpType::kF), vs, mb}), t);
    }
  }
  g.finalize();
  sim::Engine engine;
  sim::task::TaskExecutor exec(engine, g);
  Timeline tl;
  tl.makespan = exec.run().count_ns();
  for (int s = 0; s < p; ++s) {
    int64_t busy = 0;
    for (const auto t : g.stream_tasks(streams[static_cast<size_t>(s)]))
      busy += (exec.end_time(t) - exec.start_time(t)).count_ns();
    tl.busy.push_back(busy);
  }
  return tl;
}

int64_t peak_in_flight(const std::vector<Op>& order) {
  int64_t live = 0, peak = 0;
  for (const Op& op : order) peak = std::max(peak, live += op.type == OpType::kF ? 1 : -1);
  return peak;
}

class EverySchedule : public ::testing::TestWithParam<std::string> {};

TEST_P(EverySchedule, OpsAreCompleteOrderedAndDeadlockFree) {
  const ScheduleInfo& info = ScheduleRegistry::instance().get(GetParam(), "schedule");
  const std::vector<Shape> shapes = info.interleaved
                                        ? std::vector<Shape>{{2, 4, 2}, {4, 8, 2}, {4, 8, 3}, {3, 6, 4}, {4, 4, 2}}
                                        : std::vector<Shape>{{1, 1, 1}, {2, 3, 1}, {4, 8, 1}, {8, 4, 1}, {5, 13, 1}};
  for (const Shape& sh : shapes) {
    const StageOrders o = info.generate(sh.p, sh.m, ScheduleParams{sh.v});
    ASSERT_EQ(o.size(), static_cast<size_t>(sh.p));
    for (int s = 0; s < sh.p; ++s) {
      std::set<std::pair<int, int>> fwd, bwd;
      for (const Op& op : o[static_cast<size_t>(s)]) {
        const auto key = std::make_pair(op.microbatch, op.chunk);
        if (op.type == OpType::kF) {
          EXPECT_TRUE(fwd.insert(key).second) << "duplicate F";
        } else {
          EXPECT_TRUE(fwd.count(key)) << GetParam() << ": B before its F on stage " << s;
          EXPECT_TRUE(bwd.insert(key).second) << "duplicate B";
        }
      }
      EXPECT_EQ(fwd.size(), static_cast<size_t>(sh.m * sh.v));
      EXPECT_EQ(bwd.size(), static_cast<size_t>(sh.m * sh.v));
    }
    EXPECT_NO_THROW(run(o, sh.p, sh.v)) << GetParam() << " p" << sh.p << " m" << sh.m << " v" << sh.v;
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, EverySchedule, ::testing::Values("gpipe", "1f1b", "interleaved"));

TEST(Schedules, InFlightPeaks) {
  const int p = 4, m = 8;
  const auto one = ScheduleRegistry::instance().get("1f1b", "s").generate(p, m, {1});
  const auto gp = ScheduleRegistry::instance().get("gpipe", "s").generate(p, m, {1});
  for (int s = 0; s < p; ++s) {
    EXPECT_EQ(peak_in_flight(one[static_cast<size_t>(s)]), std::min(p - s, m));  // 1F1B: p - s
    EXPECT_EQ(peak_in_flight(gp[static_cast<size_t>(s)]), m);                    // GPipe: all m
  }
  // Interleaved (Megatron): warm-up (p - s - 1) * 2 + (v - 1) * p forwards, then one more.
  const int v = 2;
  const auto il = ScheduleRegistry::instance().get("interleaved", "s").generate(p, m, {v});
  for (int s = 0; s < p; ++s)
    EXPECT_EQ(peak_in_flight(il[static_cast<size_t>(s)]), std::min((p - s - 1) * 2 + (v - 1) * p + 1, m * v));
}

TEST(Schedules, BubbleFractionsMatchClosedForms) {
  // With F = 1, B = 2, 1F1B and GPipe take (m + p - 1)(F + B): bubble (p - 1)/(m + p - 1).
  for (const char* name : {"1f1b", "gpipe"}) {
    for (const auto& [p, m] : {std::pair{4, 8}, std::pair{8, 32}, std::pair{2, 1}}) {
      const auto o = ScheduleRegistry::instance().get(name, "s").generate(p, m, {1});
      const Timeline tl = run(o, p, 1);
      EXPECT_EQ(tl.makespan, (m + p - 1) * 3) << name;
      const double bubble = 1.0 - static_cast<double>(tl.busy[0]) / static_cast<double>(tl.makespan);
      EXPECT_NEAR(bubble, static_cast<double>(p - 1) / (m + p - 1), 1e-12) << name;
    }
  }
  // Interleaved with v chunks (each 1/v of a stage's work: F = 1, B = 2 per chunk, v times as
  // many ops): bubble time is (p - 1)(F + B), i.e. (p - 1)/(v m) of the ideal time.
  const int p = 4, m = 8, v = 2;
  const auto o = ScheduleRegistry::instance().get("interleaved", "s").generate(p, m, {v});
  const Timeline tl = run(o, p, v);
  const int64_t ideal = static_cast<int64_t>(m) * v * 3;
  EXPECT_EQ(tl.busy[0], ideal);
  EXPECT_EQ(tl.makespan - ideal, (p - 1) * 3);
}

TEST(Schedules, ShapeChecks) {
  const auto& one = ScheduleRegistry::instance().get("1f1b", "s");
  const auto& il = ScheduleRegistry::instance().get("interleaved", "s");
  EXPECT_THROW(check_schedule_shape(one, 4, 8, 2), ConfigError);  // --vp without interleaving
  EXPECT_THROW(check_schedule_shape(il, 4, 6, 2), ConfigError);   // m not a multiple of p
  EXPECT_NO_THROW(check_schedule_shape(il, 4, 8, 2));
}

}  // namespace
}  // namespace trainsim::models::schedules
