#include "models/memory/timeline.hpp"

#include <algorithm>
#include <limits>

namespace trainsim::models::memory {

ActivationTimeline::ActivationTimeline(sim::Engine& engine, const std::vector<TimelineEvent>& events, size_t slots)
    : events_(events), current_(slots, 0), peak_(slots, 0) {
  sim::TaskIndex max_task = 0;
  for (const auto& e : events_) max_task = std::max(max_task, e.task);
  first_event_.assign(events_.empty() ? 0 : max_task + 1, std::numeric_limits<uint32_t>::max());
  for (size_t i = events_.size(); i-- > 0;) first_event_[events_[i].task] = static_cast<uint32_t>(i);
  engine.signals().on_task_start.connect([this](sim::TaskIndex t, sim::Time) { apply(t, true); });
  engine.signals().on_task_end.connect([this](sim::TaskIndex t, sim::Time) { apply(t, false); });
}

void ActivationTimeline::apply(sim::TaskIndex task, bool at_start) {
  if (task >= first_event_.size()) return;
  for (uint32_t i = first_event_[task]; i < events_.size() && events_[i].task == task; ++i) {
    const TimelineEvent& e = events_[i];
    if (e.at_start != at_start) continue;
    current_[e.slot] += at_start ? e.bytes : -e.bytes;
    peak_[e.slot] = std::max(peak_[e.slot], current_[e.slot]);
  }
}

}  // namespace trainsim::models::memory
