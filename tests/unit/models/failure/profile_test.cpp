// The failure profile schema: the default preset parses with every kind, and bad values are
// one-line errors naming the field.
#include "models/failure/profile.hpp"

#include <gtest/gtest.h>

#include "../test_support.hpp"
#include "models/presets/catalog.hpp"

namespace trainsim::models::failure {
namespace {

using sim::config::Json;
using testing::config_error;

TEST(FailureProfile, DefaultPresetHasEveryKindWithASource) {
  const FailureProfile f = load_failure_profile("default", {}, 1.0);
  EXPECT_EQ(f.name, "default");
  for (const auto& k : component_kinds()) {
    ASSERT_TRUE(f.components.count(k)) << k;
    EXPECT_GT(f.components.at(k).rate, 0) << k;
    EXPECT_FALSE(f.components.at(k).source.empty()) << k;
  }
  EXPECT_FALSE(f.storage.source.empty());
  EXPECT_EQ(f.collective_timeout, sim::Time::s(600));
}

TEST(FailureProfile, DefaultRatesGiveLlama3sInterruptionsOnItsCluster) {
  // 16,384 GPUs, 2,048 servers, and trainsim's dgx-h100 fabric at that size (20,480 inter-node
  // cables, 520 fabric switches) for 54 days: the preset's derivation, 419 unexpected interruptions.
  const FailureProfile f = load_failure_profile("default", {}, 1.0);
  const std::map<std::string, double> counts = {{"gpu", 16384}, {"hbm", 16384},     {"nvswitch", 2048},
                                                {"nic", 16384}, {"cable", 20480},   {"switch", 520},
                                                {"host", 2048}, {"software", 2048}, {"storage", 1}};
  double per_hour = 0;
  for (const auto& [k, n] : counts) per_hour += n * f.components.at(k).rate;
  EXPECT_NEAR(per_hour * 54 * 24, 419.0, 0.5);
}

TEST(FailureProfile, RatesScaleAndOverride) {
  const FailureProfile base = load_failure_profile("default", {}, 1.0);
  const FailureProfile f = load_failure_profile("default", {"gpu=2e-5"}, 2.0);
  EXPECT_DOUBLE_EQ(f.components.at("gpu").rate, 4e-5);
  EXPECT_DOUBLE_EQ(f.components.at("hbm").rate, 2 * base.components.at("hbm").rate);
  EXPECT_EQ(f.components.at("gpu").source, "--rate on the command line");
}

TEST(FailureProfile, BadValuesAreOneLineErrors) {
  EXPECT_EQ(config_error([] { load_failure_profile("default", {"gpu=0"}, 1.0); }),
            "--rate gpu: must be positive (failures per component-hour), got 0.0 (give a rate above 0; leave a kind "
            "out of the failures by making it rare, e.g. 1e-12)");
  EXPECT_NE(config_error([] { load_failure_profile("default", {"gpu=-1e-5"}, 1.0); }).find("must be positive"),
            std::string::npos);
  EXPECT_NE(config_error([] { load_failure_profile("default", {"gpus=1e-5"}, 1.0); }).find("did you mean \"gpu\""),
            std::string::npos);
  EXPECT_NE(config_error([] { load_failure_profile("default", {"gpu"}, 1.0); }).find("expected KIND=RATE"),
            std::string::npos);
  EXPECT_NE(config_error([] { load_failure_profile("defualt", {}, 1.0); }).find("did you mean \"default\""),
            std::string::npos);
  Json j = presets::find("failures", "default", "x");
  j["storage"]["write_bandwidth"] = "0GBps";
  EXPECT_NE(config_error([&] {
              parse_failure_profile(j, "p");
            }).find("p.storage.write_bandwidth: expected a positive bandwidth"),
            std::string::npos);
  j = presets::find("failures", "default", "x");
  j["components"].erase("nic");
  EXPECT_EQ(config_error([&] { parse_failure_profile(j, "p"); }),
            "p.components.nic: missing component kind (give every kind a rate)");
  j = presets::find("failures", "default", "x");
  j["components"]["gpu"]["law"] = "weibul";
  EXPECT_NE(config_error([&] { parse_failure_profile(j, "p"); }).find("unknown failure law \"weibul\""),
            std::string::npos);
  j = presets::find("failures", "default", "x");
  j["slow_gpu"]["factor"] = 1.0;
  EXPECT_NE(config_error([&] { parse_failure_profile(j, "p"); }).find("p.slow_gpu.factor: must be strictly between"),
            std::string::npos);
}

}  // namespace
}  // namespace trainsim::models::failure
