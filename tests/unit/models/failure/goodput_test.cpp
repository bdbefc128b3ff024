// The planner's goodput objective: the closed form per plan.
#include "models/failure/goodput.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"

namespace trainsim::models::failure {
namespace {

using sim::config::Json;

TEST(Goodput, FasterPlansAndCheaperRestartsWin) {
  const FailureProfile f = load_failure_profile("default", {}, 1.0);
  workload::Job hw = testing::job(Json{{"model", "llama3-70b"},
                                       {"cluster", "dgx-h100"},
                                       {"gpus", 1024},
                                       {"tp", 8},
                                       {"global_batch", 512},
                                       {"recompute", "full"}});
  ReliabilityOptions o;
  o.tokens = 2e12;
  const GoodputModel g(hw, f, o);
  const sim::Time ten = sim::Time::s(10), nine = sim::Time::s(9);
  auto expected = [&](int64_t dp, int64_t zero, sim::Time it) { return g.expected_time(dp, 1, zero, it).seconds(); };
  const double ideal = g.ideal_time(ten).seconds();
  const double a = expected(128, 1, ten);
  EXPECT_GT(a, ideal);
  EXPECT_LT(a, 1.2 * ideal);
  // A faster iteration trains sooner; more replicas reading the checkpoint restart slower.
  EXPECT_LT(expected(128, 1, nine), a);
  EXPECT_LT(expected(8, 1, ten), a);
  // ZeRO-0 reads the whole optimizer state once per replica; ZeRO-3 reads one copy of everything.
  EXPECT_GT(expected(128, 0, ten), a);
  EXPECT_LT(expected(128, 3, ten), a);
  // It is the study's closed form for the same plan.
  workload::Job plan = hw;
  plan.dp = 128;
  plan.zero = 1;
  const ReliabilityModel m = reliability_model(plan, count_components(plan), sim::Time::s(10), f, o, {});
  EXPECT_NEAR(closed_form_time(m).seconds() / a, 1.0, 1e-6);
}

TEST(Goodput, NeedsTokens) {
  const FailureProfile f = load_failure_profile("default", {}, 1.0);
  const workload::Job hw = testing::job(
      Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 8}, {"global_batch", 8}, {"recompute", "full"}});
  EXPECT_THROW(GoodputModel(hw, f, ReliabilityOptions{}), ConfigError);
}

}  // namespace
}  // namespace trainsim::models::failure
