#include "planner/search/stack_space.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "models/workload/job/stack.hpp"
#include "planner/search/search.hpp"
#include "planner/search/space.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::search {
namespace {

using models::workload::Job;
using models::workload::JobSpec;
using sim::config::Json;

struct Fixture {
  JobSpec spec;
  Job hw;
  Json given;
  SearchSpace space;
  Enumeration e;
};

Json on(Json job, const std::string& stack) {
  job["stack"] = stack;
  return job;
}
Json with_key(Json job, const std::string& key, const Json& value) {
  job[key] = value;
  return job;
}

Fixture fixture(const Json& j) {
  Fixture f;
  f.given = j;
  f.spec = models::workload::parse_job(j);
  f.hw = models::workload::resolve_hardware(f.spec);
  f.space = make_space(f.spec, f.given, f.hw, SpaceOptions{});
  f.e = enumerate(f.space, f.hw, f.spec.gpus, f.spec.global_batch, f.spec.seq_len.value_or(f.hw.model.seq_len));
  return f;
}

// Long sequences (context parallelism is searched), 80 layers over pp 3 (uneven splits), and an
// MoE model (expert parallelism).
const Json kLong{
    {"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 64}, {"global_batch", 64}, {"seq_len", 32768}};
const Json kUneven{{"model", "llama3-70b"}, {"cluster", "dgx-h100"}, {"gpus", 96}, {"global_batch", 96}};
const Json kMoe{
    {"model", "mixtral-8x7b"}, {"cluster", "dgx-h100"}, {"gpus", 64}, {"global_batch", 128}, {"seq_len", 4096}};
const char* const kStacks[] = {"megatron-core-2025", "megatron-core-2024", "nemo-24.07",
                               "deepspeed",          "torchtitan",         "megatron-lm-2021"};

std::set<std::string> values(const Enumeration& e, std::string (*of)(const Candidate&)) {
  std::set<std::string> out;
  for (const Candidate& c : e.candidates) out.insert(of(c));
  return out;
}
std::string schedule_of(const Candidate& c) { return schedule_name(c); }
std::string zero_of(const Candidate& c) { return std::to_string(c.zero); }
std::string cp_of(const Candidate& c) { return std::to_string(c.cp); }
std::string ep_of(const Candidate& c) { return std::to_string(c.ep); }
std::string uneven_of(const Candidate& c) { return c.uneven ? "uneven" : "even"; }
std::string sp_of(const Candidate& c) { return c.sp ? "sp" : "no-sp"; }

// No candidate is refused by the stack: every one resolves, or fails a rule that is not the
// stack's (a divisibility rule of resolve_parallel).
TEST(StackSpace, NoCandidateIsRefusedByItsStack) {
  for (const char* stack : kStacks)
    for (const Json& job : {kLong, kUneven, kMoe}) {
      const Fixture f = fixture(on(job, stack));
      ASSERT_FALSE(f.e.candidates.empty()) << stack << " " << job.dump();
      int64_t resolved = 0;
      for (const Candidate& c : f.e.candidates) {
        Job j = f.hw;
        JobSpec spec = f.spec;
        apply(c, f.hw, spec);
        try {
          models::workload::resolve_parallel(spec, j);
          ++resolved;
        } catch (const ConfigError& err) {
          ASSERT_NE(err.message().rfind("stack \"", 0), 0u) << describe(c) << " on " << stack << ": " << err.what();
        }
      }
      EXPECT_GT(resolved, 0) << stack << " " << job.dump();
    }
}

TEST(StackSpace, DeepSpeedSearchesOnly1F1BAndUlysses) {
  const Fixture f = fixture(on(kLong, "deepspeed"));
  EXPECT_EQ(values(f.e, schedule_of), (std::set<std::string>{"1f1b"}));
  EXPECT_EQ(values(f.e, zero_of), (std::set<std::string>{"0", "1", "2", "3"}));
  EXPECT_GT(values(f.e, cp_of).size(), 1u);  // context parallelism with the stack's algorithm
  for (const Candidate& c : f.e.candidates) {
    if (c.cp == 1) continue;
    JobSpec spec = f.spec;
    apply(c, f.hw, spec);
    EXPECT_EQ(spec.cp_algo, models::workload::CpAlgo::kUlysses) << describe(c);
    EXPECT_NE(describe(c).find(" ulysses"), std::string::npos) << describe(c);
  }
  EXPECT_EQ(f.space.stack_excluded.at("cp_algo"), (std::vector<std::string>{"ring"}));
  const auto& excluded = f.space.stack_excluded.at("schedule");
  EXPECT_NE(std::find(excluded.begin(), excluded.end(), "interleaved"), excluded.end());
  EXPECT_NE(std::find(excluded.begin(), excluded.end(), "zb-v"), excluded.end());
}

TEST(StackSpace, MegatronLm2021SearchesZero0UnfusedNoCpNoSp) {
  for (const Json& job : {kLong, kUneven}) {
    const Fixture f = fixture(on(job, "megatron-lm-2021"));
    EXPECT_EQ(f.hw.attention, models::workload::Attention::kUnfused);  // the stack's recipe
    EXPECT_EQ(values(f.e, zero_of), (std::set<std::string>{"0"}));
    EXPECT_EQ(values(f.e, cp_of), (std::set<std::string>{"1"}));
    EXPECT_EQ(values(f.e, uneven_of), (std::set<std::string>{"even"}));
    EXPECT_EQ(values(f.e, sp_of), (std::set<std::string>{"no-sp"}));
    for (const Candidate& c : f.e.candidates) {
      EXPECT_NE(c.recompute, Recompute::kSelective) << describe(c);  // the stack has none | full
      EXPECT_TRUE(schedule_name(c) == "1f1b" || schedule_name(c) == "interleaved" || schedule_name(c) == "gpipe")
          << describe(c);
    }
    EXPECT_EQ(f.space.stack_excluded.at("zero"), (std::vector<std::string>{"1", "2", "3"}));
  }
  // The uneven split of 80 layers over 3 stages is not generated, and counted as the stack's.
  const Fixture u = fixture(on(kUneven, "megatron-lm-2021"));
  EXPECT_GT(u.e.rejected.at("stack megatron-lm-2021 cannot run uneven pipeline stages"), 0);
  const Fixture d = fixture(on(kUneven, "megatron-core-2025"));
  EXPECT_EQ(values(d.e, uneven_of), (std::set<std::string>{"even", "uneven"}));
}

TEST(StackSpace, NemoTorchtitanAndMegatronCore2024KeepTheirZeroStagesAndSchedules) {
  const Fixture nemo = fixture(on(kLong, "nemo-24.07"));
  EXPECT_EQ(values(nemo.e, zero_of), (std::set<std::string>{"0", "1"}));
  for (const std::string& s : values(nemo.e, schedule_of)) EXPECT_TRUE(s == "1f1b" || s == "interleaved") << s;
  const Fixture titan = fixture(on(kLong, "torchtitan"));
  EXPECT_EQ(values(titan.e, zero_of), (std::set<std::string>{"0", "3"}));
  const Fixture moe = fixture(on(kMoe, "torchtitan"));  // FSDP with EP for MoE too (sharding.cpp)
  EXPECT_EQ(values(moe.e, zero_of), (std::set<std::string>{"0", "3"}));
  EXPECT_GT(values(moe.e, ep_of).size(), 1u);
  const Fixture core = fixture(on(kLong, "megatron-core-2024"));
  EXPECT_EQ(values(core.e, zero_of), (std::set<std::string>{"0", "1"}));
  // The research stack runs everything: nothing excluded. The default stack has Megatron-Core's
  // schedules only (no GPipe, no zero-bubble) but every ZeRO stage.
  const Fixture all = fixture(on(kLong, "research"));
  EXPECT_TRUE(all.space.stack_excluded.empty());
  EXPECT_EQ(values(all.e, zero_of), (std::set<std::string>{"0", "1", "2", "3"}));
  const Fixture current = fixture(kLong);
  EXPECT_EQ(values(current.e, zero_of), (std::set<std::string>{"0", "1", "2", "3"}));
  for (const std::string& s : values(current.e, schedule_of))
    EXPECT_TRUE(s == "1f1b" || s == "interleaved" || s == "breadth-first") << s;
}

// A pinned value, or an option the planner does not search, that the stack cannot run is refused
// once, before enumeration, with the stack's own message.
TEST(StackSpace, WhatTheStackCannotRunIsRefusedUpFront) {
  auto error = [](const Json& j) {
    try {
      fixture(j);
    } catch (const ConfigError& e) {
      return e.path() + ": " + e.message();
    }
    return std::string("no error");
  };
  EXPECT_EQ(
      error(on(with_key(kLong, "schedule", "interleaved"), "deepspeed")).rfind("schedule: stack \"deepspeed\"", 0), 0u);
  EXPECT_EQ(error(on(with_key(kLong, "tp_comm_overlap", true), "deepspeed")).rfind("tp_comm_overlap: stack", 0), 0u);
  EXPECT_EQ(error(on(with_key(kLong, "zero", 2), "nemo-24.07")).rfind("zero: stack \"nemo-24.07\"", 0), 0u);
  EXPECT_EQ(error(on(with_key(kLong, "attention", "flash"), "megatron-lm-2021")).rfind("attention: stack", 0), 0u);
  // torchtitan's async TP runs only compiled: with tp pinned above 1 refused before the search,
  // else only tp 1 is searched (the overlap a no-op there); compiled, every tp.
  EXPECT_EQ(error(on(with_key(with_key(kLong, "tp_comm_overlap", true), "tp", 2), "torchtitan"))
                .rfind("tp_comm_overlap: stack", 0),
            0u);
  const Fixture eager = fixture(on(with_key(kLong, "tp_comm_overlap", true), "torchtitan"));
  for (const Candidate& c : eager.e.candidates) EXPECT_EQ(c.tp, 1) << describe(c);
  EXPECT_EQ(eager.space.stack_excluded.at("tp"),
            (std::vector<std::string>{"> 1 (tp_comm_overlap without torch_compile)"}));
  const Fixture compiled =
      fixture(on(with_key(with_key(kLong, "tp_comm_overlap", true), "torch_compile", true), "torchtitan"));
  EXPECT_TRUE(std::any_of(compiled.e.candidates.begin(), compiled.e.candidates.end(),
                          [](const Candidate& c) { return c.tp > 1; }));
}

// torchtitan compiles no MXFP8 model with TP: a compiled MXFP8 plan searches tp 1 only, an eager
// one every tp; a pinned tp > 1 is refused up front.
TEST(StackSpace, CompiledMxfp8OnTorchtitanSearchesTp1) {
  const Json b200{{"model", "llama3-8b"}, {"cluster", "dgx-b200"}, {"gpus", 64},
                  {"global_batch", 64},   {"precision", "mxfp8"},  {"stack", "torchtitan"}};
  const Fixture compiled = fixture(with_key(b200, "torch_compile", true));
  ASSERT_FALSE(compiled.e.candidates.empty());
  for (const Candidate& c : compiled.e.candidates) EXPECT_EQ(c.tp, 1) << describe(c);
  EXPECT_EQ(compiled.space.stack_excluded.at("tp"), (std::vector<std::string>{"> 1 (torch_compile with mxfp8)"}));
  const Fixture eager = fixture(b200);
  EXPECT_TRUE(
      std::any_of(eager.e.candidates.begin(), eager.e.candidates.end(), [](const Candidate& c) { return c.tp > 1; }));
  EXPECT_THROW(fixture(with_key(with_key(b200, "torch_compile", true), "tp", 2)), ConfigError);
}

// A pinned shard group on a stack without HSDP: only candidates whose dp*cp equals it shard.
TEST(StackSpace, PinnedShardGroupWithoutHybridShardingKeepsFullShardingOnly) {
  const Fixture f = fixture(on(with_key(kLong, "dp_shard", 8), "megatron-core-2024"));
  ASSERT_FALSE(f.e.candidates.empty());
  for (const Candidate& c : f.e.candidates)
    if (c.zero > 0) {
      EXPECT_EQ(static_cast<int64_t>(c.dp) * c.cp, 8) << describe(c);
    }
}

// The whole search on three restricted stacks: every plan it returns runs on the stack.
// The MoE token dispatcher is searched among the stack's, only where it moves tokens (ep > 1).
TEST(StackSpace, DispatchersOfTheStackForExpertParallelCandidates) {
  using models::llm::MoeDispatcher;
  auto dispatchers = [](const Fixture& f, bool ep) {
    std::set<int> out;
    for (const Candidate& c : f.e.candidates)
      if ((c.ep > 1) == ep) out.insert(c.moe_dispatcher);
    return out;
  };
  for (const auto& [stack, expected] : std::vector<std::pair<std::string, std::set<int>>>{
           {"megatron-core-2025", {1, 2, 3}}, {"megatron-core-2024", {1, 2}}, {"deepspeed", {1}}}) {
    Fixture f = fixture(on(kMoe, stack));
    const size_t before = f.e.candidates.size();
    int64_t with_ep = 0;
    for (const Candidate& c : f.e.candidates) with_ep += c.ep > 1 ? 1 : 0;
    expand_dispatchers(f.space, f.e);
    EXPECT_EQ(dispatchers(f, true), expected) << stack;
    EXPECT_EQ(dispatchers(f, false), std::set<int>{0}) << stack;  // ep = 1 keeps the job's
    EXPECT_EQ(f.e.candidates.size(), before + static_cast<size_t>(with_ep) * (expected.size() - 1)) << stack;
    for (const Candidate& c : f.e.candidates) {
      JobSpec spec = f.spec;
      apply(c, f.hw, spec);
      if (c.moe_dispatcher) {
        EXPECT_EQ(spec.moe_dispatcher, static_cast<MoeDispatcher>(c.moe_dispatcher - 1));
      }
    }
  }
  // Pinned: only the job's.
  Fixture pinned = fixture(with_key(kMoe, "moe_dispatcher", "allgather"));
  const size_t n = pinned.e.candidates.size();
  expand_dispatchers(pinned.space, pinned.e);
  EXPECT_EQ(pinned.e.candidates.size(), n);
  EXPECT_EQ(dispatchers(pinned, true), std::set<int>{0});
  // A dispatcher the stack cannot run is refused before anything is enumerated.
  EXPECT_THROW(fixture(on(with_key(kMoe, "moe_dispatcher", "flex"), "megatron-core-2024")), ConfigError);
}

TEST(StackSearch, EveryPlanPassesTheStackCheck) {
  const Json small{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 32},
                   {"global_batch", 128},  {"seq_len", 4096},       {"network", "analytic"}};
  SearchOptions o;
  o.rerank = 3;
  o.rerank_flow = 0;
  o.keep = 20;
  for (const std::string stack : {"deepspeed", "megatron-lm-2021", "torchtitan", "nemo-24.07"}) {
    const Fixture f = fixture(on(small, stack));
    const SearchResult r = run_search(f.hw, f.spec, f.given, o);
    EXPECT_EQ(r.stack, stack);
    ASSERT_FALSE(r.plans.empty()) << stack;
    for (const Plan& p : r.plans) {
      const Job j = plan_job(f.hw, f.spec, p.candidate);
      EXPECT_NO_THROW(models::workload::check_stack_features(j)) << stack << " " << describe(p.candidate);
      if (stack == "deepspeed") {
        EXPECT_EQ(j.schedule, "1f1b");
      }
      if (stack == "megatron-lm-2021") {
        EXPECT_EQ(j.zero, 0);
        EXPECT_EQ(j.attention, models::workload::Attention::kUnfused);
      }
      if (stack == "torchtitan") {
        EXPECT_TRUE(j.zero == 0 || j.zero == 3);
      }
    }
  }
}

}  // namespace
}  // namespace trainsim::planner::search
