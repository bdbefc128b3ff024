// A stack's recipe defaults (models/workload/job/stack.cpp with_stack_defaults): `defaults` fill
// the job keys a job leaves out, `precision_defaults` those of the job's precision on top; the
// job's own keys win.
#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "models/presets/catalog.hpp"
#include "models/workload/job/stack.hpp"

namespace trainsim::models::workload {
namespace {

using sim::config::Json;
using testing::with;

Json bridge(const Json& extra) {
  return with(Json{{"model", "llama3-8b"},
                   {"cluster", "dgx-h100"},
                   {"stack", "megatron-bridge-2025"},
                   {"gpus", 8},
                   {"global_batch", 8}},
              extra);
}

TEST(StackDefaults, PrecisionDefaultsFollowTheJobsPrecision) {
  // Megatron-Bridge's FP8-CS and MXFP8 recipes gather parameters in FP8; BF16 and NVFP4 do not.
  EXPECT_TRUE(testing::job(bridge({{"precision", "fp8"}})).fp8_param_gather);
  EXPECT_FALSE(testing::job(bridge({})).fp8_param_gather);
  EXPECT_EQ(with_stack_defaults(bridge({{"precision", "mxfp8"}})).at("fp8_param_gather"), true);
  EXPECT_FALSE(with_stack_defaults(bridge({{"precision", "nvfp4"}})).contains("fp8_param_gather"));
  // The job's own key wins, and the plain defaults still apply (ZeRO-1).
  const Job off = testing::job(bridge({{"precision", "fp8"}, {"fp8_param_gather", false}}));
  EXPECT_FALSE(off.fp8_param_gather);
  EXPECT_EQ(off.zero, 1);
}

TEST(StackDefaults, AStackFileIsCheckedWhereItIsWrong) {
  Json stack = models::presets::find("stacks", "megatron-bridge-2025", "stack");
  stack["name"] = "custom";
  stack["precision_defaults"] = Json{{"fp9", Json::object()}};
  EXPECT_NE(testing::config_error([&] {
              testing::job(bridge({{"stack", stack}}));
            }).find("precision_defaults"),
            std::string::npos);
  stack["precision_defaults"] = Json{{"fp8", {{"fp8_param_gathr", true}}}};
  const std::string typo = testing::config_error([&] { testing::job(bridge({{"stack", stack}})); });
  EXPECT_NE(typo.find("stack.precision_defaults.fp8.fp8_param_gathr"), std::string::npos) << typo;
  EXPECT_NE(typo.find("did you mean \"fp8_param_gather\""), std::string::npos) << typo;
  stack["precision_defaults"] = Json{{"fp8", {{"precision", "bf16"}}}};
  EXPECT_NE(testing::config_error([&] {
              testing::job(bridge({{"stack", stack}}));
            }).find("not a job option"),
            std::string::npos);
}

}  // namespace
}  // namespace trainsim::models::workload
