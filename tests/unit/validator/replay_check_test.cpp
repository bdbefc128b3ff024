// The replay program of every pipeline schedule and parallel dimension passes the checks a real
// distributed execution needs (validator/replay/check.hpp), and each check fails on a program
// broken the way it looks for.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "models/workload/job/job.hpp"
#include "models/workload/run/simulate.hpp"
#include "tests/unit/validator/replay_jobs.hpp"
#include "validator/replay/check.hpp"
#include "validator/replay/program.hpp"

namespace trainsim::validator::replay {
namespace {

std::string problems_text(const CheckReport& r) {
  std::string s;
  for (const auto& p : r.problems) s += "\n  " + p;
  return s;
}

class ReplayMatrix : public testing::TestWithParam<replay_jobs::ReplayCase> {};

TEST_P(ReplayMatrix, ProgramCanRunAsWritten) {
  const Program p = replay_jobs::program_of(GetParam().job);
  const CheckReport r = check_program(p);
  EXPECT_TRUE(r.ok()) << GetParam().name << problems_text(r);
  EXPECT_EQ(p.ranks.size(), static_cast<size_t>(GetParam().job.value("gpus", 0)));
  EXPECT_GT(r.ops, 0);
}

INSTANTIATE_TEST_SUITE_P(Replay, ReplayMatrix, testing::ValuesIn(replay_jobs::replay_matrix()),
                         [](const auto& info) { return info.param.name; });

// The matrix covers every schedule and every parallel dimension at least once.
TEST(ReplayMatrixCoverage, EverySchedule) {
  std::vector<std::string> schedules;
  for (const auto& c : replay_jobs::replay_matrix()) schedules.push_back(c.job.value("schedule", "1f1b"));
  for (const char* s : {"1f1b", "gpipe", "interleaved", "zb-h1", "zb-h2", "zb-v", "breadth-first"})
    EXPECT_NE(std::find(schedules.begin(), schedules.end(), s), schedules.end()) << s;
  bool tp = false, pp = false, dp = false, cp = false, ep = false, zero = false;
  for (const auto& c : replay_jobs::replay_matrix()) {
    tp = tp || c.job.value("tp", 1) > 1;
    pp = pp || c.job.value("pp", 1) > 1;
    cp = cp || c.job.value("cp", 1) > 1;
    ep = ep || c.job.value("ep", 1) > 1;
    zero = zero || c.job.value("zero", 0) > 0;
    dp = dp || c.job.value("gpus", 1) > c.job.value("tp", 1) * c.job.value("pp", 1) * c.job.value("cp", 1);
  }
  EXPECT_TRUE(tp && pp && dp && cp && ep && zero);
}

Program small_program() { return replay_jobs::program_of(replay_jobs::replay_matrix().front().job); }

TEST(ReplayCheck, CollectivesIssuedInAnotherOrderOnOneRank) {
  Program p = small_program();
  auto& ops = p.ranks[0].ops;
  // Swap rank 0's first two collectives on one communicator.
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t j = i + 1; j < ops.size(); ++j)
      if (ops[i].kind == OpKind::kCollective && ops[j].kind == OpKind::kCollective && ops[i].group == ops[j].group &&
          ops[i].task != ops[j].task) {
        std::swap(ops[i].task, ops[j].task);
        const CheckReport r = check_program(p);
        ASSERT_FALSE(r.ok());
        EXPECT_NE(problems_text(r).find("collective order"), std::string::npos) << problems_text(r);
        return;
      }
  FAIL() << "no two collectives on one communicator";
}

TEST(ReplayCheck, SendWithoutItsReceive) {
  Program p = small_program();
  for (auto& rp : p.ranks)
    for (size_t i = 0; i < rp.ops.size(); ++i)
      if (rp.ops[i].kind == OpKind::kRecv) {
        rp.ops[i].kind = OpKind::kCompute;
        const CheckReport r = check_program(p);
        ASSERT_FALSE(r.ok());
        EXPECT_NE(problems_text(r).find("unmatched transfer"), std::string::npos) << problems_text(r);
        return;
      }
  FAIL() << "no receive";
}

TEST(ReplayCheck, WaitingOnALaterOpDeadlocks) {
  Program p = small_program();
  auto& ops = p.ranks[0].ops;
  ASSERT_GT(ops.size(), 2u);
  ops[0].deps.push_back(static_cast<uint32_t>(ops.size() - 1));  // the first op waits for the last
  const CheckReport r = check_program(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(problems_text(r).find("deadlock: rank 0 stops after 0 of"), std::string::npos) << problems_text(r);
}

TEST(ReplayCheck, TransfersReceivedOutOfOrder) {
  Program p = small_program();
  for (auto& rp : p.ranks) {
    std::vector<size_t> recvs;
    for (size_t i = 0; i < rp.ops.size(); ++i)
      if (rp.ops[i].kind == OpKind::kRecv && (recvs.empty() || rp.ops[recvs[0]].peer == rp.ops[i].peer))
        recvs.push_back(i);
    if (recvs.size() < 2) continue;
    std::swap(rp.ops[recvs[0]].task, rp.ops[recvs[1]].task);
    const CheckReport r = check_program(p);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(problems_text(r).find("transfer order"), std::string::npos) << problems_text(r);
    return;
  }
  FAIL() << "no rank receives twice from one peer";
}

}  // namespace
}  // namespace trainsim::validator::replay
