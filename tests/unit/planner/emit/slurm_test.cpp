// --emit slurm: nodes = gpus / gpus_per_node, one task per node, torchrun per task.
#include <gtest/gtest.h>

#include "emit_test_support.hpp"

namespace trainsim::planner::emit {
namespace {

using testing::Json;
using testing::with;

std::string sbatch(const Json& j) { return testing::file("slurm", testing::job(j), "train.sbatch"); }

TEST(SlurmEmitter, NodesAreGpusOverGpusPerNode) {
  for (const int gpus : {8, 64, 256, 1024}) {
    const std::string s = sbatch(
        Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", gpus}, {"tp", 8}, {"global_batch", gpus}});
    const std::string nodes = std::to_string(gpus / 8);
    EXPECT_TRUE(testing::contains(s, "#SBATCH --nodes=" + nodes + "\n")) << gpus;
    EXPECT_TRUE(testing::contains(s, "#SBATCH --ntasks-per-node=1\n"));
    EXPECT_TRUE(testing::contains(s, "#SBATCH --gpus-per-node=8\n"));
    EXPECT_TRUE(testing::contains(s, "--nnodes " + nodes + " --nproc-per-node 8")) << gpus;
  }
}

TEST(SlurmEmitter, RunsMegatronThroughSrunAndTorchrun) {
  const std::string s = sbatch(testing::llama70b());
  EXPECT_EQ(s.rfind("#!/bin/bash\n#SBATCH --job-name=trainsim-llama3-70b\n", 0), 0u);
  EXPECT_TRUE(testing::contains(s, "srun --kill-on-bad-exit=1 torchrun"));
  EXPECT_TRUE(testing::contains(s, "--rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\""));
  EXPECT_TRUE(testing::contains(s, "pretrain_gpt.py\" \"${MEGATRON_ARGS[@]}\""));
  // The same Megatron arguments as --emit megatron.
  EXPECT_EQ(testing::flag_value(s, "--num-layers-per-virtual-pipeline-stage"), "4");
  EXPECT_TRUE(testing::has_flag(s, "--use-distributed-optimizer"));
}

TEST(SlurmEmitter, PartialNodes) {
  const std::string four =
      sbatch(Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 4}, {"tp", 4}, {"global_batch", 4}});
  EXPECT_TRUE(testing::contains(four, "#SBATCH --nodes=1\n"));
  EXPECT_TRUE(testing::contains(four, "#SBATCH --gpus-per-node=4\n"));
  const std::string twelve =
      sbatch(Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 12}, {"global_batch", 12}});
  EXPECT_TRUE(testing::contains(twelve, "#SBATCH --nodes=2\n"));
  EXPECT_TRUE(testing::contains(twelve, "#SBATCH --gpus-per-node=6\n"));
  EXPECT_TRUE(testing::contains(twelve, "do not fill whole 8-GPU nodes"));
}

}  // namespace
}  // namespace trainsim::planner::emit
