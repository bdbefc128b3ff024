// Unit tests for sim/task/task_graph: streams, multi-stream tasks, CSR successor lists.

#include "sim/task/task_graph.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/error.hpp"

namespace trainsim::sim::task {
namespace {

std::vector<TaskIndex> successors(const TaskGraph& g, TaskIndex i) {
  return {g.successors_begin(i), g.successors_end(i)};
}

std::vector<TaskIndex> stream_tasks(const TaskGraph& g, StreamId s) {
  const auto& list = g.stream_tasks(s);
  return {list.begin(), list.end()};
}

std::vector<StreamId> streams(const TaskGraph& g, TaskIndex i) {
  return {g.streams_of(i), g.streams_of(i) + g.task(i).n_streams};
}

TaskSpec spec(TaskGraph& g, const std::string& label, TaskKind kind = TaskKind::kCompute) {
  TaskSpec s;
  s.kind = kind;
  s.label = g.intern(label);
  return s;
}

TEST(TaskGraphTest, InternDeduplicatesLabels) {
  TaskGraph g;
  const LabelId a = g.intern("attn_fwd");
  const LabelId b = g.intern("mlp_fwd");
  EXPECT_NE(a, b);
  EXPECT_EQ(g.intern("attn_fwd"), a);
  EXPECT_EQ(g.label(a), "attn_fwd");
  EXPECT_EQ(g.label(b), "mlp_fwd");
}

TEST(TaskGraphTest, StreamsKeepRankLabelAndInsertionOrder) {
  TaskGraph g;
  const StreamId s0 = g.add_stream(0, "compute");
  const StreamId s1 = g.add_stream(1, "compute");
  EXPECT_EQ(s0, 0u);
  EXPECT_EQ(s1, 1u);
  EXPECT_EQ(g.stream_count(), 2u);
  EXPECT_EQ(g.stream(s1).rank, 1);
  EXPECT_EQ(g.label(g.stream(s1).label), "compute");
  EXPECT_EQ(g.stream(s0).label, g.stream(s1).label);  // one interned label
  const TaskIndex t0 = g.add(spec(g, "a"), s0);
  const TaskIndex t1 = g.add(spec(g, "b"), s1);
  const TaskIndex t2 = g.add(spec(g, "c"), s0);
  EXPECT_EQ(g.size(), 3u);
  EXPECT_EQ(stream_tasks(g, s0), (std::vector<TaskIndex>{t0, t2}));
  EXPECT_EQ(stream_tasks(g, s1), (std::vector<TaskIndex>{t1}));
  EXPECT_EQ(streams(g, t2), (std::vector<StreamId>{s0}));
}

TEST(TaskGraphTest, MultiStreamTaskJoinsEveryStreamInOrder) {
  // A collective over ranks 0..2 occupies one stream per rank; it is queued behind whatever
  // each stream already holds.
  TaskGraph g;
  const StreamId r0 = g.add_stream(0, "dp");
  const StreamId r1 = g.add_stream(1, "dp");
  const StreamId r2 = g.add_stream(2, "dp");
  const TaskIndex before = g.add(spec(g, "grad"), r1);
  const TaskIndex ar = g.add(spec(g, "allreduce", TaskKind::kCollective), {r2, r0, r1});
  EXPECT_EQ(g.task(ar).n_streams, 3);
  EXPECT_EQ(streams(g, ar), (std::vector<StreamId>{r2, r0, r1}));  // listed order is kept
  EXPECT_EQ(stream_tasks(g, r0), (std::vector<TaskIndex>{ar}));
  EXPECT_EQ(stream_tasks(g, r1), (std::vector<TaskIndex>{before, ar}));
  EXPECT_EQ(stream_tasks(g, r2), (std::vector<TaskIndex>{ar}));
  // The next single-stream task's stream reference is not confused with the collective's.
  const TaskIndex after = g.add(spec(g, "opt"), r0);
  EXPECT_EQ(streams(g, after), (std::vector<StreamId>{r0}));
  EXPECT_EQ(g.task(ar).spec.kind, TaskKind::kCollective);
}

TEST(TaskGraphTest, FinalizeBuildsCsrSuccessorsInEdgeOrder) {
  // Diamond plus a shortcut, edges added out of task order:
  //   0 -> 3, 2 -> 3, 0 -> 1, 1 -> 2, 0 -> 2
  TaskGraph g;
  const StreamId s = g.add_stream(0, "compute");
  for (int i = 0; i < 4; ++i) g.add(spec(g, "t" + std::to_string(i)), s);
  g.add_dep(0, 3);
  g.add_dep(2, 3);
  g.add_dep(0, 1);
  g.add_dep(1, 2);
  g.add_dep(0, 2);
  EXPECT_FALSE(g.finalized());
  g.finalize();
  EXPECT_TRUE(g.finalized());
  // Each task's successors keep the order their edges were added in.
  EXPECT_EQ(successors(g, 0), (std::vector<TaskIndex>{3, 1, 2}));
  EXPECT_EQ(successors(g, 1), (std::vector<TaskIndex>{2}));
  EXPECT_EQ(successors(g, 2), (std::vector<TaskIndex>{3}));
  EXPECT_EQ(successors(g, 3), (std::vector<TaskIndex>{}));
  // In-degrees count the edges into each task.
  EXPECT_EQ(g.task(0).n_deps, 0u);
  EXPECT_EQ(g.task(1).n_deps, 1u);
  EXPECT_EQ(g.task(2).n_deps, 2u);
  EXPECT_EQ(g.task(3).n_deps, 2u);
  // CSR: the rows are contiguous ranges of one array: [0,3) [3,4) [4,5) [5,5).
  EXPECT_EQ(g.task(0).succ_begin, 0u);
  EXPECT_EQ(g.task(0).succ_end, 3u);
  EXPECT_EQ(g.task(1).succ_begin, 3u);
  EXPECT_EQ(g.task(2).succ_begin, 4u);
  EXPECT_EQ(g.task(3).succ_begin, 5u);
  EXPECT_EQ(g.task(3).succ_end, 5u);
  g.finalize();  // idempotent
  EXPECT_EQ(successors(g, 0), (std::vector<TaskIndex>{3, 1, 2}));
}

TEST(TaskGraphTest, FinalizedGraphIsImmutable) {
  TaskGraph g;
  const StreamId s = g.add_stream(0, "compute");
  const TaskIndex a = g.add(spec(g, "a"), s);
  const TaskIndex b = g.add(spec(g, "b"), s);
  g.finalize();
  EXPECT_THROW(g.add(spec(g, "c"), s), InternalError);
  EXPECT_THROW(g.add_dep(a, b), InternalError);
  EXPECT_THROW(g.add_stream(1, "compute"), InternalError);
}

TEST(TaskGraphTest, InvalidConstructionIsAnInternalError) {
  TaskGraph g;
  const StreamId s = g.add_stream(0, "compute");
  const TaskIndex a = g.add(spec(g, "a"), s);
  EXPECT_THROW(g.add(spec(g, "x"), StreamId{7}), InternalError);                            // unknown stream
  EXPECT_THROW(g.add(spec(g, "x"), std::vector<StreamId>{}), InternalError);                // no stream
  EXPECT_THROW(g.add(spec(g, "x"), std::vector<StreamId>{s, StreamId{9}}), InternalError);  // unknown
  EXPECT_THROW(g.add_dep(a, a), InternalError);                                             // self loop
  EXPECT_THROW(g.add_dep(a, TaskIndex{42}), InternalError);                                 // unknown task
}

TEST(TaskGraphTest, DisplayNameAndKindNames) {
  TaskGraph g;
  const StreamId s = g.add_stream(0, "compute");
  TaskSpec fwd = spec(g, "attn_fwd");
  fwd.microbatch = 3;
  fwd.layer = 7;
  const TaskIndex a = g.add(fwd, s);
  const TaskIndex b = g.add(spec(g, "opt_step"), s);
  EXPECT_EQ(g.display_name(a), "attn_fwd mb3 L7");
  EXPECT_EQ(g.display_name(b), "opt_step");
  EXPECT_STREQ(to_string(TaskKind::kCompute), "compute");
  EXPECT_STREQ(to_string(TaskKind::kCollective), "collective");
  EXPECT_STREQ(to_string(TaskKind::kP2P), "p2p");
  EXPECT_STREQ(to_string(TaskKind::kMemory), "memory");
}

}  // namespace
}  // namespace trainsim::sim::task
