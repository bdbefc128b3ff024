// --emit torchtitan: mesh degrees multiply to the GPU count, schedule names, stages and batch.
#include <gtest/gtest.h>

#include "emit_test_support.hpp"

namespace trainsim::planner::emit {
namespace {

using testing::Json;
using testing::with;

std::string toml(const Json& j) { return testing::file("torchtitan", testing::job(j), "torchtitan.toml"); }

// The integer after "key = " (-1 when absent).
int64_t value(const std::string& text, const std::string& key) {
  const auto lines = testing::code_lines(text, key + " = ");
  for (const auto& l : lines)
    if (l.rfind(key + " = ", 0) == 0) return std::stoll(l.substr(key.size() + 3));
  return -1;
}
std::string string_value(const std::string& text, const std::string& key) {
  for (const auto& l : testing::code_lines(text, key + " = \""))
    if (l.rfind(key + " = \"", 0) == 0) return l.substr(key.size() + 4, l.find('"', key.size() + 4) - key.size() - 4);
  return "";
}

TEST(TorchtitanEmitter, MeshDegreesMultiplyToTheGpuCount) {
  const std::vector<Json> jobs = {
      testing::llama70b(),
      Json{{"model", "llama3-8b"},
           {"cluster", "dgx-h100"},
           {"gpus", 32},
           {"zero", 3},
           {"dp_shard", 8},
           {"global_batch", 256}},
      Json{{"model", "llama3-8b"},
           {"cluster", "dgx-h100"},
           {"gpus", 64},
           {"tp", 2},
           {"cp", 4},
           {"seq_len", 131072},
           {"global_batch", 16}},
      Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 16}, {"global_batch", 64}},
  };
  for (const auto& j : jobs) {
    const auto job = testing::job(j);
    const std::string t = toml(j);
    const int64_t product = value(t, "data_parallel_replicate_degree") * value(t, "data_parallel_shard_degree") *
                            value(t, "context_parallel_degree") * value(t, "tensor_parallel_degree") *
                            value(t, "pipeline_parallel_degree");
    EXPECT_EQ(product, job.gpus) << t;
  }
  // ZeRO-3 with shard groups of 8 of 32 data-parallel ranks: HSDP 4 x 8, resharding after forward.
  const std::string hsdp = toml(jobs[1]);
  EXPECT_EQ(value(hsdp, "data_parallel_replicate_degree"), 4);
  EXPECT_EQ(value(hsdp, "data_parallel_shard_degree"), 8);
  EXPECT_EQ(string_value(hsdp, "fsdp_reshard_after_forward"), "always");
  // Plain DDP when nothing else is parallel.
  EXPECT_EQ(value(toml(jobs[3]), "data_parallel_replicate_degree"), 16);
  EXPECT_EQ(value(toml(jobs[3]), "data_parallel_shard_degree"), 1);
}

TEST(TorchtitanEmitter, SchedulesStagesAndBatch) {
  const std::string t = toml(testing::llama70b());
  EXPECT_EQ(string_value(t, "pipeline_parallel_schedule"), "Interleaved1F1B");
  EXPECT_EQ(value(t, "local_batch_size"), 64);  // 64 micro-batches of 1 per data-parallel rank
  EXPECT_EQ(value(t, "global_batch_size"), 512);
  EXPECT_EQ(value(t, "pipeline_parallel_microbatch_size"), 1);
  EXPECT_EQ(string_value(t, "flavor"), "70B");
  // 20 stages of 4 layers: layers.0 .. layers.79 once each, embedding first, head last.
  size_t stages = 0;
  for (size_t at = t.find("  [\""); at != std::string::npos; at = t.find("  [\"", at + 1)) ++stages;
  EXPECT_EQ(stages, 20u);
  EXPECT_TRUE(testing::contains(t, "[\"tok_embeddings\", \"layers.0\", \"layers.1\", \"layers.2\", \"layers.3\"]"));
  EXPECT_TRUE(
      testing::contains(t, "[\"layers.76\", \"layers.77\", \"layers.78\", \"layers.79\", \"norm\", \"output\"]"));
  const auto schedule = [](const std::string& s, int vp) {
    return string_value(toml(with(testing::llama70b(), Json{{"schedule", s}, {"vp", vp}, {"stack", "research"}})),
                        "pipeline_parallel_schedule");
  };
  EXPECT_EQ(schedule("1f1b", 1), "1F1B");
  EXPECT_EQ(schedule("gpipe", 1), "GPipe");
  EXPECT_EQ(schedule("zb-v", 2), "ZBVZeroBubble");
  EXPECT_EQ(schedule("breadth-first", 2), "LoopedBFS");
  EXPECT_EQ(schedule("zb-h1", 1), "1F1B");  // no single-stage zero-bubble schedule; said in a comment
  // Without pipelining the local batch is the micro-batch; torchtitan accumulates to the global batch.
  const std::string nopp = toml(
      Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 16}, {"micro_batch", 2}, {"global_batch", 64}});
  EXPECT_EQ(value(nopp, "local_batch_size"), 2);
  EXPECT_EQ(value(nopp, "pipeline_parallel_schedule"), -1);
}

TEST(TorchtitanEmitter, AsyncTpFloat8AndRecompute) {
  const std::string t = toml(
      with(testing::llama70b(),
           Json{{"tp_comm_overlap", true}, {"precision", "fp8"}, {"fp8_param_gather", true}, {"recompute", "full"}}));
  EXPECT_TRUE(testing::contains(t, "enable_async_tensor_parallel = true"));
  EXPECT_TRUE(testing::contains(t, "[compile]\nenable = true\ncomponents = [\"model\", \"loss\"]\n"));
  // A job that compiles the blocks only (torchtitan before 2025) leaves the loss out.
  const std::string blocks = toml(Json{{"model", "llama3-8b"},
                                       {"cluster", "dgx-h100"},
                                       {"gpus", 8},
                                       {"global_batch", 16},
                                       {"stack", "torchtitan"},
                                       {"torch_compile", true},
                                       {"compile_loss", false}});
  EXPECT_TRUE(testing::contains(blocks, "[compile]\nenable = true\ncomponents = [\"model\"]\n"));
  EXPECT_TRUE(testing::contains(t, "converters = [\"quantize.linear.float8\"]"));
  EXPECT_TRUE(testing::contains(t, "[quantize.linear.float8]"));
  EXPECT_TRUE(testing::contains(t, "enable_fsdp_float8_all_gather = true"));
  EXPECT_EQ(string_value(t, "mode"), "full");
  EXPECT_EQ(string_value(toml(testing::llama70b()), "selective_ac_option"), "op");
}

}  // namespace
}  // namespace trainsim::planner::emit
