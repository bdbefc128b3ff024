// Unit tests for sim/registry.hpp: variants self-register, are listed by name whatever the
// registration order, and an unknown name fails with a did-you-mean and the valid names.

#include "sim/registry.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/error.hpp"

namespace trainsim::sim {
namespace {

struct FruitInfo {
  static constexpr const char* kWhat = "fruit";
  std::string name;
  std::string description;
  bool sweet = false;
};
using FruitRegistry = Registry<FruitInfo>;

// Registered out of order on purpose.
const FruitRegistry::Registrar pear{FruitInfo{"pear", "A pear", true}};
const FruitRegistry::Registrar lemon{FruitInfo{"lemon", "A lemon", false}};
const FruitRegistry::Registrar apple{FruitInfo{"apple", "An apple", true}};

std::string error_of(const std::string& name) {
  try {
    FruitRegistry::instance().get(name, "basket.fruit");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Registry, ListsByName) {
  EXPECT_EQ(FruitRegistry::instance().names(), (std::vector<std::string>{"apple", "lemon", "pear"}));
  ASSERT_EQ(FruitRegistry::instance().all().size(), 3u);
  EXPECT_EQ(FruitRegistry::instance().all().front().description, "An apple");
  EXPECT_EQ(FruitRegistry::instance().names_if([](const FruitInfo& f) { return f.sweet; }),
            (std::vector<std::string>{"apple", "pear"}));
}

TEST(Registry, FindsByName) {
  EXPECT_EQ(FruitRegistry::instance().get("lemon", "basket.fruit").description, "A lemon");
  EXPECT_EQ(FruitRegistry::instance().find("lemon"), &FruitRegistry::instance().get("lemon", "x"));
  EXPECT_EQ(FruitRegistry::instance().find("melon"), nullptr);
}

TEST(Registry, UnknownNameListsTheValidOnes) {
  EXPECT_EQ(error_of("peer"),
            "basket.fruit: unknown fruit \"peer\" (did you mean \"pear\"? valid: apple, lemon, pear)");
  EXPECT_EQ(error_of("banana"), "basket.fruit: unknown fruit \"banana\" (valid: apple, lemon, pear)");
}

}  // namespace
}  // namespace trainsim::sim
