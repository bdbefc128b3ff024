#include "models/memory/footprint.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"

namespace trainsim::models::memory {
namespace {

// Korthikanti et al. 2022, Sec 4 (MHA, GeLU 4h, dropout, unfused attention), bytes per layer:
//   no parallelism:          s b h (34 + 5 a s / h)
//   tensor parallel t:       s b h (10 + 24/t + 5 a s / (h t))
//   t + sequence parallel:   s b h (34/t + 5 a s / (h t))
//   selective recompute + SP: 34 s b h / t;   full recompute: 2 s b h (the layer input)
class Korthikanti : public ::testing::Test {
 protected:
  llm::ModelSpec m = testing::model("megatron-145.6b");  // h 12288, a 96
  double s = 2048, b = 2, h = 12288, a = 96;
  double act(int64_t t, bool sp, const std::string& recompute) const {
    return static_cast<double>(layer_activation_bytes(m, 2, 2048, t, sp, recompute, false).count());
  }
};

TEST_F(Korthikanti, NoParallelism) { EXPECT_NEAR(act(1, false, "none"), s * b * h * (34 + 5 * a * s / h), 1.0); }
TEST_F(Korthikanti, TensorParallel) {
  EXPECT_NEAR(act(8, false, "none"), s * b * h * (10 + 24.0 / 8 + 5 * a * s / (h * 8)), 1.0);
}
TEST_F(Korthikanti, SequenceParallel) {
  EXPECT_NEAR(act(8, true, "none"), s * b * h * (34.0 / 8 + 5 * a * s / (h * 8)), 1.0);
}
TEST_F(Korthikanti, SelectiveRecompute) { EXPECT_NEAR(act(8, true, "selective"), 34 * s * b * h / 8, 1.0); }
TEST_F(Korthikanti, FullRecompute) {
  EXPECT_NEAR(act(8, false, "full"), 2 * s * b * h, 1.0);
  EXPECT_NEAR(act(8, true, "full"), 2 * s * b * h / 8, 1.0);
}

TEST(Footprint, ModelStatesPerZeroStage) {
  const llm::ModelSpec m = testing::model("llama3-8b");
  StageMemoryInput in;
  in.model = &m;
  in.layers = 32;
  in.layers_per_chunk = 32;
  in.first = in.last = true;
  in.tp = 1;
  in.dp = 8;
  in.micro_batch = 1;
  in.seq_len = 8192;
  const double p = m.parameters();  // untied head: one stage holds everything
  for (int zero = 0; zero <= 3; ++zero) {
    in.zero = zero;
    const StageMemory sm = stage_memory(in);
    EXPECT_NEAR(static_cast<double>(sm.weights.count()), p * 2 / (zero >= 3 ? 8 : 1), 1e3) << zero;
    EXPECT_NEAR(static_cast<double>(sm.gradients.count()), p * 4 / (zero >= 2 ? 8 : 1), 1e3) << zero;
    EXPECT_NEAR(static_cast<double>(sm.optimizer.count()), p * 12 / (zero >= 1 ? 8 : 1), 1e3) << zero;
  }
}

}  // namespace
}  // namespace trainsim::models::memory
