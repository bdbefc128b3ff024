#pragma once
// A name -> variant registry for the failure models' extension points (failure laws, checkpoint
// strategies): each variant registers from its own file; an unknown name fails with the valid
// ones. Info needs `name` and `description` members. Built once at start-up, then read-only.

#include <algorithm>
#include <string>
#include <vector>

#include "sim/config/schema.hpp"
#include "sim/error.hpp"

namespace trainsim::models::failure {

template <typename Info>
class Registry {
 public:
  static const Registry& instance() { return mutable_instance(); }

  // `what` names the kind of variant in messages ("failure law").
  const Info& get(const std::string& name, const std::string& path, const char* what) const {
    for (const auto& e : entries_)
      if (e.name == name) return e;
    const auto valid = names();
    const std::string near = sim::config::did_you_mean(name, valid);
    throw ConfigError(
        path, std::string("unknown ") + what + " \"" + name + "\"",
        (near.empty() ? std::string() : "did you mean \"" + near + "\"? ") + "valid: " + sim::config::join(valid));
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.name);
    return out;
  }
  const std::vector<Info>& all() const { return entries_; }

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

}  // namespace trainsim::models::failure
