#include "planner/search/search.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/error.hpp"

namespace trainsim::planner::search {
namespace {

using sim::config::Json;

struct Input {
  models::workload::JobSpec spec;
  models::workload::Job hw;
  Json given;
};
Input input(const Json& j) {
  Input in;
  in.given = j;
  in.spec = models::workload::parse_job(j);
  in.hw = models::workload::resolve_hardware(in.spec);
  return in;
}

const Json kSmall{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 32},
                  {"global_batch", 128},  {"seq_len", 4096},       {"network", "analytic"}};

// ostringstream, not string + chains (GCC 12's -Wrestrict false positive).
std::string fingerprint(const SearchResult& r) {
  std::ostringstream s;
  s << r.considered << "/" << r.valid << "/" << r.feasible;
  for (const auto& p : r.plans) s << "|" << describe(p.candidate) << "@" << p.iteration_s;
  for (const auto& p : r.memory_front) s << "|f:" << describe(p.candidate);
  return s.str();
}

TEST(Search, SameResultOnAnyNumberOfThreads) {
  const Input in = input(kSmall);
  SearchOptions o;
  o.keep = 5;
  o.rerank = 6;
  o.threads = 1;
  const SearchResult one = run_search(in.hw, in.spec, in.given, o);
  o.threads = 3;
  const SearchResult three = run_search(in.hw, in.spec, in.given, o);
  EXPECT_EQ(fingerprint(one), fingerprint(three));
  EXPECT_EQ(one.simulated, 6);
  ASSERT_EQ(one.plans.size(), 5u);
}

TEST(Search, SimulatedPlansComeFirstInSimulatedOrderAndAllFit) {
  const Input in = input(kSmall);
  SearchOptions o;
  o.keep = 8;
  o.rerank = 8;
  const SearchResult r = run_search(in.hw, in.spec, in.given, o);
  ASSERT_EQ(r.plans.size(), 8u);  // none dropped: the fast memory check agrees with the simulator's
  for (size_t i = 0; i < r.plans.size(); ++i) {
    EXPECT_TRUE(r.plans[i].simulated);
    if (i > 0) {
      EXPECT_LE(r.plans[i - 1].iteration_s, r.plans[i].iteration_s);
    }
    EXPECT_LE(r.plans[i].peak_memory_bytes, 0.9 * 80.0 * 1024 * 1024 * 1024);
  }
  EXPECT_GT(r.feasible, 0);
  EXPECT_LE(r.feasible, r.valid);
  EXPECT_LE(r.valid, r.considered);
  // The time vs memory front is sorted fastest first with memory falling.
  for (size_t i = 1; i < r.memory_front.size(); ++i) {
    EXPECT_LE(r.memory_front[i - 1].iteration_s, r.memory_front[i].iteration_s);
    EXPECT_GT(r.memory_front[i - 1].peak_memory_bytes, r.memory_front[i].peak_memory_bytes);
  }
}

// The flow re-ranking tries the best 4 first: when all four run past the flow network's work
// budget it stops there (GPT-3 175B with TP 16 pinned across two DGX A100 nodes, PP 2 and 32
// micro-batches of 1: each plan needs over 2 M events); when any of them fits, the round goes on
// as before.
TEST(Search, FlowReRankingStopsWhenItsBestFourAllRunPastTheBudget) {
  const Input in = input(Json{{"model", "gpt3-175b"},
                              {"cluster", "dgx-a100"},
                              {"gpus", 64},
                              {"global_batch", 32},
                              {"micro_batch", 1},
                              {"tp", 16},
                              {"pp", 2},
                              {"schedule", "1f1b"}});
  SearchOptions o;
  o.rerank = 12;
  o.rerank_flow = 10;
  o.threads = 2;
  const SearchResult r = run_search(in.hw, in.spec, in.given, o);
  EXPECT_TRUE(r.flow_stopped);
  EXPECT_EQ(r.flow_over_budget, 4);
  EXPECT_EQ(r.simulated_flow, 0);
  for (const auto& p : r.plans) EXPECT_NE(p.fidelity, "flow");

  SearchOptions small;
  small.rerank = 8;
  small.rerank_flow = 6;
  Json flow = kSmall;
  flow.erase("network");
  const Input on_flow = input(flow);
  const SearchResult f = run_search(on_flow.hw, on_flow.spec, on_flow.given, small);
  EXPECT_FALSE(f.flow_stopped);
  EXPECT_GE(f.simulated_flow + f.flow_over_budget, 6);
  EXPECT_GT(f.simulated_flow, 0);
}

TEST(Search, SaysWhenNothingFits) {
  Json j = kSmall;
  j["model"] = "llama3-405b";
  j["gpus"] = 8;
  j["global_batch"] = 8;
  const Input in = input(j);
  EXPECT_THROW(run_search(in.hw, in.spec, in.given, SearchOptions{}), PlanError);
}

// Offloads must fit the host's memory too: LLaMA-3-405B on 16 GB200s fits the GPUs only with
// the optimizer offloaded, whose states and fp32 gradients (378 GiB per GPU) overflow the Grace's
// 240 GB; on 32 they fit, and the plan's offloads stay within the host.
TEST(Search, OffloadsMustFitTheHostMemory) {
  Json j{{"model", "llama3-405b"}, {"cluster", "gb200-nvl72"}, {"gpus", 16}, {"global_batch", 16}, {"seq_len", 4096},
         {"network", "analytic"},  {"offload_optimizer", true}};
  const Input small = input(j);
  try {
    run_search(small.hw, small.spec, small.given, SearchOptions{});
    ADD_FAILURE() << "16 GPUs must not fit";
  } catch (const PlanError& e) {
    EXPECT_NE(std::string(e.what()).find("on the host"), std::string::npos) << e.what();
  }
  j["gpus"] = 32;
  const Input big = input(j);
  SearchOptions o;
  o.rerank = 4;
  const SearchResult r = run_search(big.hw, big.spec, big.given, o);
  ASSERT_FALSE(r.plans.empty());
}

TEST(Search, SaysWhenNoFactorizationPassesTheRules) {
  Json j = kSmall;
  j["gpus"] = 97;  // prime: only tp = pp = cp = 1, dp = 97, which does not divide the batch
  const Input in = input(j);
  EXPECT_THROW(run_search(in.hw, in.spec, in.given, SearchOptions{}), ConfigError);
}

}  // namespace
}  // namespace trainsim::planner::search
