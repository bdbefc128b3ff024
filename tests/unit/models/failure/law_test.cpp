// Every failure law: registered, and its long-run rate is the rate it was given.
#include "models/failure/law.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace trainsim::models::failure {
namespace {

TEST(FailureLaws, RegistryHasTheLaws) {
  const auto names = FailureLawRegistry::instance().names();
  EXPECT_EQ(names, (std::vector<std::string>{"exponential", "weibull"}));
  EXPECT_THROW(FailureLawRegistry::instance().get("weibul", "law"), ConfigError);
}

class EveryLaw : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryLaw, MeanLifetimeIsOneOverTheRate) {
  const auto& law = FailureLawRegistry::instance().get(GetParam(), "law");
  for (const double shape : {0.7, 1.0, 2.0}) {
    sim::Rng rng(1, 2);
    const LawParams p{1e-4, shape, 0};
    double sum = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) sum += law.lifetime(rng, p);
    EXPECT_NEAR(sum / n * p.rate, 1.0, 0.02) << GetParam() << " shape " << shape;
    if (law.memoryless) break;
  }
}

TEST_P(EveryLaw, CohortOfNFailsAtNTimesTheRateWhenMemoryless) {
  const auto& law = FailureLawRegistry::instance().get(GetParam(), "law");
  sim::Rng rng(3, 4);
  const LawParams p{1e-5, 1.0, 0};
  double sum = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) sum += law.next_in_cohort(rng, 10.0, 1000.0, p) - 10.0;
  // Shape 1 is exponential for both laws: the first of 1000 fails after 1 / (1000 x rate) = 100 h.
  EXPECT_NEAR(sum / n, 100.0, 1.5);
}

INSTANTIATE_TEST_SUITE_P(Laws, EveryLaw, ::testing::ValuesIn(FailureLawRegistry::instance().names()));

TEST(WeibullLaw, FirstOfACohortIsWeibullWithScaleOverNToTheOneOverK) {
  // The minimum of n Weibull(eta, k) lifetimes is Weibull(eta n^(-1/k), k): its median is
  // eta n^(-1/k) ln(2)^(1/k).
  const auto& law = FailureLawRegistry::instance().get("weibull", "law");
  const LawParams p{1e-4, 0.5, 0};
  const double eta = 1.0 / (p.rate * std::tgamma(1.0 + 1.0 / p.shape));
  const double n = 50;
  sim::Rng rng(5, 6);
  std::vector<double> v;
  for (int i = 0; i < 20001; ++i) v.push_back(law.next_in_cohort(rng, 0.0, n, p));
  std::nth_element(v.begin(), v.begin() + 10000, v.end());
  const double median = eta * std::pow(n, -1.0 / p.shape) * std::pow(std::log(2.0), 1.0 / p.shape);
  EXPECT_NEAR(v[10000] / median, 1.0, 0.03);
}

TEST(WeibullLaw, AgedCohortOfWearOutPartsFailsSooner) {
  const auto& law = FailureLawRegistry::instance().get("weibull", "law");
  sim::Rng a(7, 8), b(7, 8);
  double young = 0, old = 0;
  for (int i = 0; i < 20000; ++i) {
    young += law.next_in_cohort(a, 0.0, 100.0, LawParams{1e-4, 3.0, 0});
    old += law.next_in_cohort(b, 0.0, 100.0, LawParams{1e-4, 3.0, 8000});
  }
  EXPECT_LT(old, 0.5 * young);
}

}  // namespace
}  // namespace trainsim::models::failure
