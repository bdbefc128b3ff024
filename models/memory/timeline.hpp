#pragma once
// Activation memory over the simulated timeline: bytes are allocated when a micro-batch's first
// forward task of a chunk starts and freed when that chunk's backward ends. Subscribes to the
// engine's task signals, so the peak reflects the schedule that actually ran.

#include <cstdint>
#include <vector>

#include "sim/engine.hpp"

namespace trainsim::models::memory {

struct TimelineEvent {
  sim::TaskIndex task;
  bool at_start;
  int64_t bytes;
  uint32_t slot;  // rank slot
};

class ActivationTimeline {
 public:
  // `events` must be sorted by task and outlive the timeline.
  ActivationTimeline(sim::Engine& engine, const std::vector<TimelineEvent>& events, size_t slots);
  int64_t peak(uint32_t slot) const { return peak_[slot]; }
  int64_t current(uint32_t slot) const { return current_[slot]; }

 private:
  void apply(sim::TaskIndex task, bool at_start);
  const std::vector<TimelineEvent>& events_;
  std::vector<uint32_t> first_event_;  // per task: index of its first event, or UINT32_MAX
  std::vector<int64_t> current_, peak_;
};

}  // namespace trainsim::models::memory
