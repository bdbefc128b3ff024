#include "planner/search/space.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "models/presets/catalog.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::search {
namespace {

using sim::config::Json;

struct Fixture {
  models::workload::JobSpec spec;
  models::workload::Job hw;
  Json given;
};
Fixture fixture(const Json& j) {
  Fixture f;
  f.given = j;
  f.spec = models::workload::parse_job(j);
  f.hw = models::workload::resolve_hardware(f.spec);
  return f;
}

Enumeration run(const Fixture& f) {
  return enumerate(make_space(f.spec, f.given, f.hw, SpaceOptions{}), f.hw, f.spec.gpus, f.spec.global_batch,
                   f.spec.seq_len.value_or(f.hw.model.seq_len));
}

TEST(Space, UnevenLayoutsLightenTheFirstAndLastStages) {
  EXPECT_TRUE(uneven_layout(80, 4).empty());  // even
  EXPECT_EQ(uneven_layout(126, 16), (std::vector<int64_t>{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7}));
  EXPECT_EQ(uneven_layout(80, 3), (std::vector<int64_t>{26, 27, 27}));
  EXPECT_TRUE(uneven_layout(3, 4).empty());  // a stage would get no layer
}

TEST(Space, CountsEveryConfigurationOnceAndHonoursTheRules) {
  const Fixture f = fixture(
      Json{{"model", "llama3-70b"}, {"cluster", "dgx-h100"}, {"gpus", 256}, {"global_batch", 512}, {"seq_len", 8192}});
  const Enumeration e = run(f);
  int64_t removed = 0;
  for (const auto& [rule, n] : e.rejected) removed += n;
  EXPECT_EQ(e.considered, removed + static_cast<int64_t>(e.candidates.size()));
  ASSERT_FALSE(e.candidates.empty());
  for (const Candidate& c : e.candidates) {
    EXPECT_EQ(static_cast<int64_t>(c.tp) * c.pp * c.cp * c.dp, 256);
    EXPECT_EQ(512 % (c.dp * c.micro_batch), 0);
    EXPECT_LE(c.tp, 8);
    EXPECT_EQ(64 % c.tp, 0);
  }
  // Sorted keys are unique: no configuration twice.
  std::vector<Candidate> sorted = e.candidates;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_TRUE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  // Megatron's usual choice for this job is in the space (selective recompute is the same plan as none
  // with flash attention, so it is searched as none).
  EXPECT_TRUE(std::any_of(e.candidates.begin(), e.candidates.end(), [](const Candidate& c) {
    return c.tp == 8 && c.pp == 4 && c.vp == 5 && c.micro_batch == 1 && c.zero == 1 &&
           c.recompute == Recompute::kNone && schedule_name(c) == "interleaved";
  }));
}

TEST(Space, GivenFlagsPinTheirDimension) {
  const Fixture f = fixture(Json{{"model", "llama3-70b"},
                                 {"cluster", "dgx-h100"},
                                 {"gpus", 256},
                                 {"global_batch", 512},
                                 {"tp", 8},
                                 {"schedule", "1f1b"},
                                 {"recompute", "full"}});
  const Enumeration e = run(f);
  ASSERT_FALSE(e.candidates.empty());
  for (const Candidate& c : e.candidates) {
    EXPECT_EQ(c.tp, 8);
    EXPECT_EQ(schedule_name(c), "1f1b");
    EXPECT_EQ(c.recompute, Recompute::kFull);
    EXPECT_EQ(c.vp, 1);
  }
}

TEST(Space, MixtureOfExpertsSearchesExpertParallelism) {
  const Fixture f = fixture(
      Json{{"model", "mixtral-8x7b"}, {"cluster", "dgx-h100"}, {"gpus", 64}, {"global_batch", 256}, {"seq_len", 4096}});
  const Enumeration e = run(f);
  EXPECT_TRUE(std::any_of(e.candidates.begin(), e.candidates.end(), [](const Candidate& c) { return c.ep == 8; }));
  // Parallel folding: EP may exceed DP (it takes in TP and CP ranks) as long as etp x ep divides
  // the stage's tp x cp x dp ranks.
  EXPECT_TRUE(std::any_of(e.candidates.begin(), e.candidates.end(), [](const Candidate& c) { return c.ep > c.dp; }));
  for (const Candidate& c : e.candidates) EXPECT_EQ((c.tp * c.cp * c.dp) % (c.ep * c.etp), 0);
  // FSDP with expert parallelism: the experts shard over their own data-parallel group.
  EXPECT_TRUE(std::any_of(e.candidates.begin(), e.candidates.end(), [](const Candidate& c) { return c.zero == 3; }));
}

TEST(Space, APinnedScheduleRunsOnOneStageToo) {
  // ZB-V on one stage is a valid job (two chunks on the same rank): a pinned schedule is not
  // replaced by 1F1B when pp = 1.
  const Fixture f = fixture(Json{{"model", "llama3-8b"},
                                 {"stack", "zero-bubble"},
                                 {"cluster", "dgx-h100"},
                                 {"gpus", 8},
                                 {"global_batch", 64},
                                 {"tp", 8},
                                 {"pp", 1},
                                 {"schedule", "zb-v"}});
  const Enumeration e = run(f);
  ASSERT_FALSE(e.candidates.empty());
  for (const Candidate& c : e.candidates) EXPECT_EQ(c.vp, 2);
}

TEST(Space, ExpertStatesShardWithoutDataParallelism) {
  // tp 8 with expert-TP 1: the eight TP ranks hold the same experts whole, so ZeRO shards their
  // states even at dp = 1.
  const Fixture f = fixture(Json{{"model", "mixtral-8x7b"},
                                 {"cluster", "dgx-h100"},
                                 {"gpus", 16},
                                 {"global_batch", 16},
                                 {"seq_len", 4096},
                                 {"tp", 8},
                                 {"pp", 2},
                                 {"etp", 1}});
  const Enumeration e = run(f);
  EXPECT_TRUE(std::any_of(e.candidates.begin(), e.candidates.end(),
                          [](const Candidate& c) { return c.dp == 1 && c.zero == 1; }));
}

TEST(Space, TensorParallelismBeyondANodeOnlyInWholeNodes) {
  const Fixture f =
      fixture(Json{{"model", "gpt3-175b"}, {"cluster", "dgx-a100"}, {"gpus", 1536}, {"global_batch", 1536}});
  const Enumeration e = run(f);
  EXPECT_TRUE(std::any_of(e.candidates.begin(), e.candidates.end(), [](const Candidate& c) { return c.tp == 16; }));
  for (const Candidate& c : e.candidates) EXPECT_TRUE(c.tp <= 8 || c.tp % 8 == 0) << describe(c);
  EXPECT_GT(e.rejected.at("tp beyond a node must be a multiple of gpus_per_node"), 0);
}

// An NVL72-shaped cluster: dgx-h100's figures with one NVLink domain of 72 GPUs (nine 8-GPU
// nodes on one NVSwitch fabric), independent of the Blackwell presets' own figures.
Json nvl72_like() {
  Json c = models::presets::find("clusters", "dgx-h100", "cluster");
  c["name"] = "h100-nvl72-like";
  c["nvlink_domain"] = 72;
  return c;
}

TEST(Space, TensorParallelismIsSearchedAcrossTheWholeNVLinkDomain) {
  // GPT-3's 96 heads: TP 12, 16, 24, 32 and 48 stay inside a 72-GPU domain; TP 96 does not (not a
  // multiple of 72). On DGX A100 only multiples of the 8-GPU node go beyond 8.
  const Fixture f =
      fixture(Json{{"model", "gpt3-175b"}, {"cluster", nvl72_like()}, {"gpus", 1152}, {"global_batch", 1536}});
  const Enumeration e = run(f);
  for (const int64_t tp : {12, 16, 24, 32, 48})
    EXPECT_TRUE(std::any_of(e.candidates.begin(), e.candidates.end(), [&](const Candidate& c) { return c.tp == tp; }))
        << tp;
  for (const Candidate& c : e.candidates) EXPECT_LE(c.tp, 72) << describe(c);
  EXPECT_GT(e.rejected.at("tp beyond an NVLink domain must be a multiple of nvlink_domain"), 0);
  EXPECT_EQ(e.rejected.count("tp beyond a node must be a multiple of gpus_per_node"), 0u);
}

TEST(Space, ExpertParallelismIsNotCappedAtANode) {
  // Qwen3-30B-A3B's 128 experts over 128 GPUs: EP 64 and 128 are searched, on NVL72 racks
  // (inside a rack: NVLink, Estimator.ParallelGroupsInsideTheNVLinkDomainAreNVLinkTraffic) as on
  // DGX H100 (across nodes).
  for (const Json& cluster : {Json(nvl72_like()), Json("gb200-nvl72"), Json("dgx-h100")}) {
    const Fixture f = fixture(Json{
        {"model", "qwen3-30b-a3b"}, {"cluster", cluster}, {"gpus", 128}, {"global_batch", 256}, {"seq_len", 4096}});
    const Enumeration e = run(f);
    for (const int64_t ep : {16, 64, 128})
      EXPECT_TRUE(std::any_of(e.candidates.begin(), e.candidates.end(), [&](const Candidate& c) { return c.ep == ep; }))
          << ep << " on " << cluster.dump().substr(0, 40);
  }
}

TEST(Space, PipelineLayoutCannotBePinned) {
  const Fixture f = fixture(Json{{"model", "llama3-8b"},
                                 {"cluster", "dgx-h100"},
                                 {"gpus", 16},
                                 {"global_batch", 64},
                                 {"pp", 2},
                                 {"pp_layout", Json::array({16, 16})}});
  EXPECT_THROW(make_space(f.spec, f.given, f.hw, SpaceOptions{}), ConfigError);
}

}  // namespace
}  // namespace trainsim::planner::search
