#pragma once
// A tiny observer list. Signals are members of an Engine (never static); with no
// subscriber, emitting costs one empty-vector check.

#include <functional>
#include <vector>

namespace trainsim::sim {

template <typename... Args>
class Signal {
 public:
  using Slot = std::function<void(Args...)>;
  void connect(Slot s) { slots_.push_back(std::move(s)); }
  bool empty() const { return slots_.empty(); }
  void emit(Args... args) const {
    for (const auto& s : slots_) s(args...);
  }

 private:
  std::vector<Slot> slots_;
};

}  // namespace trainsim::sim
