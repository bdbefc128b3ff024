#pragma once
// The one name -> variant registry behind every extension point (pipeline schedules, collective
// algorithms, topology builders, launch-config emitters, failure laws, checkpoint strategies).
// Each variant registers from its own file with one Registrar line; the registry is built once at
// start-up (function-local static) and read-only afterwards. Entries are kept sorted by name, so
// listings, help text and registry indices do not depend on link order.
//
// Info needs `name` and `description` members and names its kind of variant for messages:
//   static constexpr const char* kWhat = "pipeline schedule";
// Extra lookups of one registry (a filtered list, a narrower get) are free functions next to it,
// built from find(), names_if() and throw_unknown_name().

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/schema.hpp"
#include "sim/error.hpp"

namespace trainsim::sim {

// Throws the registries' ConfigError for an unknown name: at `path`, "unknown <what> \"<name>\"",
// with a did-you-mean among `valid` (when one is close) and the valid names.
[[noreturn]] inline void throw_unknown_name(const std::string& name, const std::string& path,
                                            const std::vector<std::string>& valid, const std::string& what) {
  const std::string near = config::did_you_mean(name, valid);
  throw ConfigError(
      path, "unknown " + what + " \"" + name + "\"",
      (near.empty() ? std::string() : "did you mean \"" + near + "\"? ") + "valid: " + config::join(valid));
}

template <typename Info>
class Registry {
 public:
  static const Registry& instance() { return mutable_instance(); }

  // The entry called `name`, or nullptr.
  const Info* find(const std::string& name) const {
    for (const auto& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }
  // The entry called `name`; throws ConfigError at `path` (throw_unknown_name) when unknown.
  const Info& get(const std::string& name, const std::string& path) const {
    if (const Info* e = find(name)) return *e;
    throw_unknown_name(name, path, names(), Info::kWhat);
  }
  std::vector<std::string> names() const {
    return names_if([](const Info&) { return true; });
  }
  // Names of the entries for which `pred(info)` holds, in registry order.
  template <typename Pred>
  std::vector<std::string> names_if(Pred pred) const {
    std::vector<std::string> out;
    for (const auto& e : entries_)
      if (pred(e)) out.push_back(e.name);
    return out;
  }
  const std::vector<Info>& all() const { return entries_; }  // sorted by name

  struct Registrar {
    explicit Registrar(Info info) {
      auto& entries = mutable_instance().entries_;
      entries.push_back(std::move(info));
      std::sort(entries.begin(), entries.end(), [](const Info& a, const Info& b) { return a.name < b.name; });
    }
  };

 private:
  static Registry& mutable_instance() {
    static Registry registry;
    return registry;
  }
  std::vector<Info> entries_;
};

}  // namespace trainsim::sim
