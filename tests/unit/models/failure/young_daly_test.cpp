#include "models/failure/young_daly.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace trainsim::models::failure {
namespace {

using sim::Time;

TEST(YoungDaly, YoungIsSqrtTwoDeltaM) {
  // delta 5 min, M 10 h: sqrt(2 x 300 x 36000) = 4647.6 s.
  EXPECT_NEAR(young_interval(Time::s(300), Time::s(36000)).seconds(), 4647.58, 0.01);
}

TEST(YoungDaly, DalyAddsHigherOrderTermsAndCapsAtM) {
  const double d = 300, m = 36000, x = d / (2 * m);
  const double expect = std::sqrt(2 * d * m) * (1 + std::sqrt(x) / 3 + x / 9) - d;
  EXPECT_NEAR(daly_interval(Time::s(300), Time::s(36000)).seconds(), expect, 1e-6);
  EXPECT_EQ(daly_interval(Time::s(100), Time::s(40)), Time::s(40));
}

TEST(YoungDaly, ExpectedTimeGrowsToWorkWithoutFailures) {
  // M -> infinity: T -> W (tau + delta) / tau.
  const double t =
      daly_expected_time(Time::s(36000), Time::s(3600), Time::s(60), Time::s(600), Time::s(1000000000)).seconds();
  EXPECT_NEAR(t, 36000.0 * 3660.0 / 3600.0, 1.0);
}

TEST(YoungDaly, DalysIntervalMinimisesHisExpectedTime) {
  const Time w = Time::s(30 * 86400), d = Time::s(300), r = Time::s(600), m = Time::s(36000);
  const Time best = daly_interval(d, m);
  const double at = daly_expected_time(w, best, d, r, m).seconds();
  for (double f : {0.7, 0.85, 1.15, 1.4})
    EXPECT_LT(at, daly_expected_time(w, Time::from_seconds_ceil(best.seconds() * f), d, r, m).seconds());
}

}  // namespace
}  // namespace trainsim::models::failure
