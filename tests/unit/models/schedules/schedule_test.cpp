// Registry-wide tests (STYLE conv. 8 and 10): every registered pipeline schedule is checked for
// completeness, per-stage order validity, cross-stage deadlock freedom and balanced work. The
// per-schedule closed forms (peaks, bubbles) live in gpipe_test, one_f_one_b_test and
// interleaved_test.
#include "models/schedules/schedule.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "../test_support.hpp"
#include "pipeline_replay.hpp"
#include "sim/engine.hpp"
#include "sim/error.hpp"
#include "sim/task/executor.hpp"
#include "sim/task/task_graph.hpp"

namespace trainsim::models::schedules {
namespace {

using pipeline::peak_in_flight;
using pipeline::replay;

const ScheduleRegistry& registry() { return ScheduleRegistry::instance(); }

TEST(ScheduleRegistry, ListsEveryScheduleAndRejectsUnknownNames) {
  const auto names = registry().names();
  for (const char* expected : {"gpipe", "1f1b", "interleaved"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(names.size(), registry().all().size());
  for (const auto& s : registry().all()) {
    EXPECT_FALSE(s.description.empty()) << s.name;
    EXPECT_EQ(&registry().get(s.name, "schedule"), &s);
  }
  EXPECT_EQ(models::testing::config_error([] { registry().get("interleave", "schedule"); }),
            "schedule: unknown pipeline schedule \"interleave\" (did you mean \"interleaved\"? valid: " +
                sim::config::join(names) + ")");
  // No near match: the valid names alone.
  EXPECT_EQ(models::testing::config_error([] { registry().get("zzzzzzzzzz", "--schedule"); }),
            "--schedule: unknown pipeline schedule \"zzzzzzzzzz\" (valid: " + sim::config::join(names) + ")");
  EXPECT_FALSE(registry().get("1f1b", "s").interleaved);
  EXPECT_FALSE(registry().get("gpipe", "s").interleaved);
  EXPECT_TRUE(registry().get("interleaved", "s").interleaved);
}

struct Shape {
  int p, m, v;
};

// Shapes a schedule accepts (check_schedule_shape): v = 1 for plain schedules; for interleaved
// ones v >= 2 and m a multiple of p.
std::vector<Shape> shapes(const ScheduleInfo& s) {
  if (s.interleaved)
    return {{1, 3, 2}, {2, 2, 2}, {2, 4, 2}, {4, 4, 2}, {4, 8, 2}, {4, 8, 3}, {3, 6, 4}, {4, 16, 2}, {8, 16, 2}};
  return {{1, 1, 1}, {1, 5, 1}, {2, 1, 1}, {2, 3, 1}, {4, 2, 1}, {4, 8, 1}, {8, 4, 1}, {5, 13, 1}, {8, 32, 1}};
}

class EverySchedule : public ::testing::TestWithParam<std::string> {
 protected:
  const ScheduleInfo& info() const { return registry().get(GetParam(), "schedule"); }
};

TEST_P(EverySchedule, EveryChunkOfEveryMicroBatchHasOneForwardThenOneBackwardPerStage) {
  for (const Shape& sh : shapes(info())) {
    ASSERT_NO_THROW(check_schedule_shape(info(), sh.p, sh.m, sh.v));
    const StageOrders o = info().generate(sh.p, sh.m, ScheduleParams{sh.v});
    ASSERT_EQ(o.size(), static_cast<size_t>(sh.p));
    for (int s = 0; s < sh.p; ++s) {
      std::set<std::pair<int, int>> fwd, bwd;
      for (const Op& op : o[static_cast<size_t>(s)]) {
        const auto key = std::make_pair(op.microbatch, op.chunk);
        ASSERT_TRUE(op.microbatch >= 0 && op.microbatch < sh.m && op.chunk >= 0 && op.chunk < sh.v)
            << pipeline::describe(op);
        if (op.type == OpType::kF) {
          EXPECT_TRUE(fwd.insert(key).second) << "duplicate " << pipeline::describe(op);
        } else if (op.type == OpType::kB) {
          EXPECT_TRUE(fwd.count(key)) << GetParam() << ": " << pipeline::describe(op) << " before its F on stage " << s;
          EXPECT_TRUE(bwd.insert(key).second) << "duplicate " << pipeline::describe(op);
        }
      }
      EXPECT_EQ(fwd.size(), static_cast<size_t>(sh.m * sh.v)) << "p" << sh.p << " m" << sh.m << " v" << sh.v;
      EXPECT_EQ(bwd.size(), static_cast<size_t>(sh.m * sh.v)) << "p" << sh.p << " m" << sh.m << " v" << sh.v;
    }
  }
}

TEST_P(EverySchedule, CrossStageOrderIsDeadlockFree) {
  for (const Shape& sh : shapes(info())) {
    const StageOrders o = info().generate(sh.p, sh.m, ScheduleParams{sh.v});
    const pipeline::Replay r = replay(o, sh.p, sh.v);
    ASSERT_FALSE(r.deadlock) << GetParam() << " p" << sh.p << " m" << sh.m << " v" << sh.v << ": " << r.stuck;
    // Every stage does the same work: m v chunks of F (1) and B (2).
    for (int s = 0; s < sh.p; ++s) EXPECT_EQ(r.busy[static_cast<size_t>(s)], sh.m * sh.v * 3);
    // No schedule beats the ideal pipeline: one micro-batch must cross all p v virtual stages
    // forward and backward, and the busiest stage needs m v (F + B).
    EXPECT_GE(r.makespan, std::max<int64_t>(sh.p * sh.v * 3, sh.m * sh.v * 3 + (sh.p - 1) * 3));
  }
}

TEST_P(EverySchedule, IsAPureFunctionOfItsArguments) {
  for (const Shape& sh : shapes(info()))
    EXPECT_EQ(info().generate(sh.p, sh.m, ScheduleParams{sh.v}), info().generate(sh.p, sh.m, ScheduleParams{sh.v}));
}

TEST_P(EverySchedule, InFlightNeverExceedsTheMicroBatches) {
  for (const Shape& sh : shapes(info())) {
    const StageOrders o = info().generate(sh.p, sh.m, ScheduleParams{sh.v});
    for (int s = 0; s < sh.p; ++s) {
      const int64_t peak = peak_in_flight(o[static_cast<size_t>(s)]);
      EXPECT_GE(peak, 1);
      EXPECT_LE(peak, sh.m * sh.v);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, EverySchedule, ::testing::ValuesIn(ScheduleRegistry::instance().names()));

// The event-free replay agrees with the task executor running the same DAG (one stream per
// stage, the same cross-stage edges): both give ASAP start times.
TEST(Schedules, ReplayAgreesWithTheTaskExecutor) {
  for (const char* name : {"1f1b", "gpipe", "interleaved"}) {
    const int p = 4, m = 8, v = registry().get(name, "s").interleaved ? 2 : 1;
    const StageOrders o = registry().get(name, "s").generate(p, m, {v});
    sim::task::TaskGraph g;
    std::map<std::tuple<int, int, int>, sim::task::TaskIndex> id;  // (type, virtual stage, mb)
    std::vector<sim::task::StreamId> streams;
    for (int s = 0; s < p; ++s) streams.push_back(g.add_stream(s, "compute"));
    for (int s = 0; s < p; ++s)
      for (const Op& op : o[static_cast<size_t>(s)]) {
        sim::task::TaskSpec spec;
        spec.duration = sim::Time::ns(op.type == OpType::kF ? 1 : 2);
        id[{static_cast<int>(op.type), op.chunk * p + s, op.microbatch}] = g.add(spec, streams[static_cast<size_t>(s)]);
      }
    for (const auto& [key, t] : id) {
      const auto [type, vs, mb] = key;
      if (type == static_cast<int>(OpType::kF) && vs > 0) g.add_dep(id.at({type, vs - 1, mb}), t);
      if (type == static_cast<int>(OpType::kB))
        g.add_dep(vs < p * v - 1 ? id.at({type, vs + 1, mb}) : id.at({static_cast<int>(OpType::kF), vs, mb}), t);
    }
    g.finalize();
    sim::Engine engine;
    sim::task::TaskExecutor exec(engine, g);
    EXPECT_EQ(exec.run().count_ns(), replay(o, p, v).makespan) << name;
  }
}

TEST(Schedules, ShapeChecks) {
  const auto& one = registry().get("1f1b", "s");
  const auto& il = registry().get("interleaved", "s");
  EXPECT_EQ(models::testing::config_error([&] { check_schedule_shape(one, 4, 8, 2); }),
            "vp: schedule \"1f1b\" does not use virtual stages, got vp = 2 (use --schedule interleaved or drop --vp)");
  EXPECT_EQ(models::testing::config_error([&] { check_schedule_shape(il, 4, 6, 2); }),
            "global_batch: interleaved 1F1B needs the number of micro-batches (6) to be a multiple of pp (4) (pick "
            "--global-batch so that global_batch/(dp*micro_batch) is a multiple of pp)");
  EXPECT_NO_THROW(check_schedule_shape(il, 4, 8, 2));
  EXPECT_NO_THROW(check_schedule_shape(il, 1, 3, 2));   // one stage: any m
  EXPECT_NO_THROW(check_schedule_shape(one, 4, 3, 1));  // 1F1B: any m
}

}  // namespace
}  // namespace trainsim::models::schedules
