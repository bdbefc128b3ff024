// Shared emitter helpers: pipeline layout analysis, Megatron's layout string, launch shape,
// comment wrapping, number formatting and shell quoting.
#include "planner/emit/detail/format.hpp"

#include <gtest/gtest.h>

#include "../emit_test_support.hpp"

namespace trainsim::planner::emit::detail {
namespace {

using testing::Json;
using testing::with;

Json base() {
  return Json{{"model", "llama3-70b"}, {"cluster", "dgx-h100"}, {"gpus", 128}, {"tp", 8}, {"pp", 4},
              {"global_batch", 64}};
}

TEST(PipelineLayout, EvenSplitHasOneChunkSize) {
  const auto l = pipeline_layout(testing::job(base()));
  EXPECT_EQ(l.kind, LayoutKind::kEven);
  EXPECT_EQ(l.chunk_layers, 20);
  const auto v = pipeline_layout(testing::job(with(base(), Json{{"vp", 5}, {"schedule", "interleaved"}})));
  EXPECT_EQ(v.kind, LayoutKind::kEven);
  EXPECT_EQ(v.chunk_layers, 4);  // 80 / (4 x 5)
}

TEST(PipelineLayout, FirstAndLastRanksOnly) {
  // pp 4: ranks hold 18, 21, 21, 20 layers.
  const auto l = pipeline_layout(testing::job(with(base(), Json{{"pp_layout", "18,21,21,20"}})));
  EXPECT_EQ(l.kind, LayoutKind::kFirstLast);
  EXPECT_EQ(l.chunk_layers, 21);
  EXPECT_EQ(l.first_layers, 18);
  EXPECT_EQ(l.last_layers, 20);
  EXPECT_TRUE(l.first_differs);
  EXPECT_TRUE(l.last_differs);
  // Only the first rank differs.
  const auto f = pipeline_layout(testing::job(with(base(), Json{{"pp_layout", "17,21,21,21"}})));
  EXPECT_EQ(f.kind, LayoutKind::kFirstLast);
  EXPECT_TRUE(f.first_differs);
  EXPECT_FALSE(f.last_differs);
  // vp 2 (loop placement): rank 0 holds virtual stages 0 and 4, rank 3 holds 3 and 7.
  const auto v = pipeline_layout(
      testing::job(with(base(), Json{{"vp", 2}, {"schedule", "interleaved"}, {"pp_layout", "9,10,10,11,9,10,10,11"}})));
  EXPECT_EQ(v.kind, LayoutKind::kFirstLast);
  EXPECT_EQ(v.first_layers, 18);
  EXPECT_EQ(v.last_layers, 22);
  EXPECT_EQ(v.chunk_layers, 10);
}

TEST(PipelineLayout, AnythingElseIsCustom) {
  const auto j = testing::job(with(base(), Json{{"pp_layout", "19,22,20,19"}}));
  EXPECT_EQ(pipeline_layout(j).kind, LayoutKind::kCustom);
  EXPECT_EQ(megatron_layout(j), "Et*19|t*22|t*20|t*19L");
  // Single-layer and empty stages.
  const auto k = testing::job(with(base(), Json{{"pp_layout", "1,39,40,0"}}));
  EXPECT_EQ(megatron_layout(k), "Et|t*39|t*40|L");
}

TEST(LaunchShape, WholeNodesPartialNodeAndUnevenCounts) {
  const auto shape = [](int64_t gpus) {
    return launch_shape(
        testing::job(Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", gpus}, {"global_batch", gpus}}));
  };
  EXPECT_EQ(shape(256).nodes, 32);
  EXPECT_EQ(shape(256).procs_per_node, 8);
  EXPECT_TRUE(shape(256).whole_nodes);
  EXPECT_EQ(shape(4).nodes, 1);
  EXPECT_EQ(shape(4).procs_per_node, 4);
  EXPECT_EQ(shape(12).nodes, 2);  // 12 GPUs on 8-GPU nodes: 2 x 6
  EXPECT_EQ(shape(12).procs_per_node, 6);
  EXPECT_FALSE(shape(12).whole_nodes);
}

TEST(Comment, WrapsParagraphsAndHangsBullets) {
  EXPECT_EQ(comment({"aaa bbb ccc", "", "ddd"}, "# ", 9), "# aaa bbb\n# ccc\n#\n# ddd\n");
  EXPECT_EQ(bullets("T:", {"one two three"}, "# ", 11), "# T:\n# - one two\n#   three\n");
}

TEST(Format, NumbersAndShellWords) {
  EXPECT_EQ(fmt(1.25), "1.25");
  EXPECT_EQ(fmt(0.01), "0.01");
  EXPECT_EQ(fmt_float(1.0), "1.0");
  EXPECT_EQ(fmt_float(1.5), "1.5");
  EXPECT_EQ(shell_word("RMSNorm"), "RMSNorm");
  EXPECT_EQ(shell_word("Et*4|t*4L"), "'Et*4|t*4L'");
  EXPECT_EQ(shell_word("([0]*3+[1]*58)"), "'([0]*3+[1]*58)'");
  EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
}

TEST(PlanSummary, NamesEveryDimension) {
  const auto s = plan_summary(testing::job(with(base(), Json{{"vp", 5}, {"schedule", "interleaved"}, {"zero", 1}})));
  EXPECT_EQ(s.rfind("llama3-70b on 128 x h100-sxm-80gb (dgx-h100, 8 per node): tp 8, pp 4, vp 5, dp 4,", 0), 0u) << s;
  EXPECT_NE(s.find("ZeRO 1"), std::string::npos) << s;
  EXPECT_NE(s.find("schedule interleaved"), std::string::npos) << s;
}

}  // namespace
}  // namespace trainsim::planner::emit::detail
