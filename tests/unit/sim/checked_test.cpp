// sim/checked: computed values past their integer are the input's ConfigError, never a wrapped or
// undefined conversion.
#include "sim/checked.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "sim/error.hpp"

namespace trainsim::sim {
namespace {

TEST(Checked, Int64InsideItsRangeIsExact) {
  EXPECT_EQ(checked_int64(0.0, "x", "fix"), 0);
  EXPECT_EQ(checked_int64(-0.0, "x", "fix"), 0);
  EXPECT_EQ(checked_int64(4294967296.0, "x", "fix"), 4294967296);
  EXPECT_EQ(checked_int64(-9223372036854775808.0, "x", "fix"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(checked_int64(9223372036854774784.0, "x", "fix"), 9223372036854774784);  // the last double below 2^63
}

TEST(Checked, Int64PastItsRangeNamesTheField) {
  for (const double v : {9223372036854775808.0, 1e300, -1e19, std::numeric_limits<double>::infinity(),
                         std::numeric_limits<double>::quiet_NaN()}) {
    try {
      checked_int64(v, "model.hidden", "a smaller model");
      ADD_FAILURE() << v;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.path(), "model.hidden");
      EXPECT_EQ(e.hint(), "a smaller model");
      EXPECT_NE(e.message().find("outside the range of a 64-bit integer"), std::string::npos) << e.message();
    }
  }
}

TEST(Checked, DurationsPastTheClockAreTheTimeOverflowError) {
  EXPECT_EQ(checked_ns(0.0), Time::zero());
  EXPECT_EQ(checked_ns(1e18), Time::ns(1000000000000000000));
  for (const double v :
       {9.3e18, 1e300, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    try {
      checked_ns(v);
      ADD_FAILURE() << v;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.path(), "simulated time");
    }
  }
  // A negative duration is a bug, not an input.
  EXPECT_THROW(checked_ns(-1.0), InternalError);
}

TEST(Checked, DerivedSizesAreChecked) {
  EXPECT_EQ(Bytes(10).scaled(0.25), Bytes(3));
  EXPECT_THROW(Bytes(int64_t{1} << 62).scaled(4.0), ConfigError);
  EXPECT_THROW(Bandwidth::bytes_per_s(1e18) * Time::s(100), ConfigError);
  EXPECT_EQ(Bandwidth::bytes_per_s(1e9) * Time::ms(2), Bytes(2000000));
}

}  // namespace
}  // namespace trainsim::sim
