// sim/log.hpp: the spec grammar, its one-line errors, and that a disabled category costs no
// evaluation of its message.
#include "sim/log.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace trainsim::sim::log {
namespace {

// Restores the process-wide thresholds after each test.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = current(); }
  void TearDown() override { configure(saved_); }

 private:
  Thresholds saved_{};
};

Level level_of(const Thresholds& t, Category c) { return t[static_cast<size_t>(c)]; }

std::string error_of(const std::string& spec) {
  try {
    parse_spec(spec, "--log");
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "--log");
    return e.message() + " (" + e.hint() + ")";
  }
  ADD_FAILURE() << "no error for " << spec;
  return "";
}

TEST_F(LogTest, EmptySpecTurnsEverythingOff) {
  const Thresholds none = parse_spec("", "--log");
  for (const Level l : none) EXPECT_EQ(l, Level::kOff);
}

TEST_F(LogTest, ParsesCategoriesAndLevels) {
  const Thresholds t = parse_spec("builder=debug,network=trace", "--log");
  EXPECT_EQ(level_of(t, Category::kBuilder), Level::kDebug);
  EXPECT_EQ(level_of(t, Category::kNetwork), Level::kTrace);
  EXPECT_EQ(level_of(t, Category::kPlanner), Level::kOff);
  EXPECT_EQ(level_of(t, Category::kFailure), Level::kOff);
  EXPECT_EQ(level_of(t, Category::kEngine), Level::kOff);
}

TEST_F(LogTest, AllThenOverridesLeftToRight) {
  const Thresholds t = parse_spec("all=debug,network=off,engine=info", "--log");
  EXPECT_EQ(level_of(t, Category::kBuilder), Level::kDebug);
  EXPECT_EQ(level_of(t, Category::kPlanner), Level::kDebug);
  EXPECT_EQ(level_of(t, Category::kFailure), Level::kDebug);
  EXPECT_EQ(level_of(t, Category::kNetwork), Level::kOff);
  EXPECT_EQ(level_of(t, Category::kEngine), Level::kInfo);
  const Thresholds later_all = parse_spec("network=trace,all=info", "--log");
  EXPECT_EQ(level_of(later_all, Category::kNetwork), Level::kInfo);
}

TEST_F(LogTest, EveryCategoryHasAName) {
  const std::vector<std::string> names = category_names();
  ASSERT_EQ(names.size(), kCategories);
  for (const char* expected : {"builder", "network", "planner", "failure", "engine"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  for (size_t i = 0; i < kCategories; ++i) {
    const Thresholds t = parse_spec(names[i] + "=trace", "--log");
    EXPECT_EQ(t[i], Level::kTrace) << names[i];
  }
}

TEST_F(LogTest, UnknownCategoryHasDidYouMeanAndTheValidNames) {
  EXPECT_EQ(error_of("netwrk=debug"),
            "unknown log category \"netwrk\" (did you mean network? categories: all, builder, network, planner, "
            "failure, engine)");
  EXPECT_EQ(error_of("xyz=debug"),
            "unknown log category \"xyz\" (categories: all, builder, network, planner, failure, engine)");
}

TEST_F(LogTest, UnknownLevelListsTheLevels) {
  EXPECT_EQ(error_of("network=verbose"), "unknown log level \"verbose\" for network (levels: off, info, debug, trace)");
  EXPECT_EQ(error_of("network=debg"),
            "unknown log level \"debg\" for network (did you mean debug? levels: off, info, debug, trace)");
}

TEST_F(LogTest, MalformedItems) {
  EXPECT_NE(error_of("network").find("expected CATEGORY=LEVEL, got \"network\""), std::string::npos);
  EXPECT_NE(error_of("network=debug,").find("expected CATEGORY=LEVEL, got \"\""), std::string::npos);
  EXPECT_NE(error_of(",network=debug").find("expected CATEGORY=LEVEL"), std::string::npos);
}

TEST_F(LogTest, ErrorNamesItsSource) {
  try {
    parse_spec("bogus=debug", "TRAINSIM_LOG");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "TRAINSIM_LOG");
  }
}

TEST_F(LogTest, DisabledCategoryDoesNotEvaluateItsArguments) {
  configure(parse_spec("network=debug", "--log"));
  int evaluated = 0;
  auto costly = [&] {
    ++evaluated;
    return 42;
  };
  ::testing::internal::CaptureStderr();
  TRAINSIM_LOG_DEBUG(kPlanner, "never ", costly());  // category off
  TRAINSIM_LOG_TRACE(kNetwork, "never ", costly());  // category below the level
  TRAINSIM_LOG(kEngine, kInfo, "never ", costly());  // off
  EXPECT_EQ(evaluated, 0);
  TRAINSIM_LOG_DEBUG(kNetwork, "once ", costly());
  TRAINSIM_LOG_INFO(kNetwork, "twice ", costly());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(evaluated, 2);
  EXPECT_EQ(err, "[network:debug] once 42\n[network:info] twice 42\n");
}

TEST_F(LogTest, OneLinePerMessage) {
  configure(parse_spec("engine=trace", "--log"));
  ::testing::internal::CaptureStderr();
  TRAINSIM_LOG_TRACE(kEngine, "a\nb");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "[engine:trace] a b\n");
}

TEST_F(LogTest, EnabledFollowsTheThreshold) {
  configure(parse_spec("failure=debug", "--log"));
  EXPECT_TRUE(enabled(Category::kFailure, Level::kInfo));
  EXPECT_TRUE(enabled(Category::kFailure, Level::kDebug));
  EXPECT_FALSE(enabled(Category::kFailure, Level::kTrace));
  EXPECT_FALSE(enabled(Category::kBuilder, Level::kInfo));
}

}  // namespace
}  // namespace trainsim::sim::log
