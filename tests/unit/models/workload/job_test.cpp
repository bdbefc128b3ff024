#include "models/workload/job.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "sim/error.hpp"

namespace trainsim::models::workload {
namespace {

using sim::config::Json;

Json base() {
  return Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 64}, {"tp", 2}, {"pp", 4},
              {"global_batch", 64}};
}

std::string error_of(const Json& j) {
  try {
    resolve_job(parse_job(j));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Job, DerivesDataParallelSizeAndMicroBatches) {
  const Job j = testing::job(base());
  EXPECT_EQ(j.dp, 8);            // 64 / (2 * 4)
  EXPECT_EQ(j.microbatches, 8);  // 64 / (8 * 1)
  EXPECT_EQ(j.seq_len, 8192);    // the model's
  EXPECT_EQ(j.gpu.name, "h100-sxm-80gb");
  EXPECT_TRUE(j.sp);  // default on with TP
}

TEST(Job, DivisibilityErrorsNameTheFieldAndTheFix) {
  Json j = base();
  j["tp"] = 3;
  EXPECT_EQ(error_of(j),
            "tp: heads (32) must be divisible by tp (3) (choose --tp among the divisors of 32: 1, 2, 4, 8, 16, 32)");
  j = base();
  j["gpus"] = 60;
  EXPECT_EQ(error_of(j),
            "gpus: 60 GPUs cannot be split into model-parallel groups of tp*pp = 8 GPUs (use a multiple of 8 GPUs, "
            "e.g. 56 or 64)");
  j = base();
  j["global_batch"] = 60;
  EXPECT_EQ(
      error_of(j),
      "global_batch: global_batch (60) is not divisible by dp*micro_batch = 8 (use a multiple of 8, e.g. 56 or 64)");
  j = base();
  j["pp"] = 3;
  j["gpus"] = 48;
  EXPECT_EQ(
      error_of(j),
      "pp: layers (32) must be divisible by pp*vp = 3 (choose pp*vp among the divisors of 32: 1, 2, 4, 8, 16, 32)");
  j = base();
  j["tp"] = 16;
  j["gpus"] = 128;
  EXPECT_EQ(error_of(j),
            "tp: kv_heads (8) must be divisible by tp (16) (choose --tp among the divisors of 8: 1, 2, 4, 8)");
}

TEST(Job, ClosedSchemaSuggestsTheNearestKey) {
  Json j = base();
  j["micro_bach"] = 2;
  EXPECT_EQ(error_of(j), "micro_bach: unknown key in job (did you mean \"micro_batch\"?)");
}

TEST(Job, ConfigJsonHoldsEveryResolvedValue) {
  const Json c = testing::job(base()).to_json();
  for (const char* key : {"model", "cluster", "gpu", "gpus", "tp", "pp", "dp", "vp", "sp", "zero", "recompute",
                          "micro_batch", "global_batch", "seq_len", "schedule", "precision", "attention"})
    EXPECT_TRUE(c.contains(key)) << key;
}

}  // namespace
}  // namespace trainsim::models::workload
