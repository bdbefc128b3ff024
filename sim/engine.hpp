#pragma once
// Engine: one simulation's clock, event queue, RNG streams and signals. An Engine is a value:
// no process-global state, so many engines can run side by side in threads.

#include <cstdint>
#include <map>

#include "sim/event_queue.hpp"
#include "sim/rng.hpp"
#include "sim/signals.hpp"
#include "sim/units.hpp"

namespace trainsim::sim {

using TaskIndex = uint32_t;

// Typed observation points. Tracers, statistics and memory timelines subscribe here.
struct EngineSignals {
  Signal<TaskIndex, Time> on_task_start;
  Signal<TaskIndex, Time> on_task_end;
};

class Engine {
 public:
  explicit Engine(uint64_t seed = 0) : seed_(seed) {}
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Time now() const { return now_; }
  EventId schedule_at(Time at, Callback cb);
  EventId schedule_in(Time delay, Callback cb) { return schedule_at(now_ + delay, std::move(cb)); }
  void cancel(EventId id) { queue_.cancel(id); }
  bool is_pending(EventId id) const { return queue_.is_pending(id); }

  // Runs events until the queue drains; returns the number of events executed.
  uint64_t run();
  // Runs events with time <= limit; the clock ends at the last event run.
  uint64_t run_until(Time limit);
  // Makes the running run() / run_until() return after the current event, leaving the queue as
  // it is (ns-3's Simulator::Stop): a simulated failure that ends the job at this instant.
  void stop() { stop_ = true; }
  // A work budget (0: none): run() and run_until() return once this many events have run in all,
  // and limit_reached() says so. Deterministic, unlike a wall-clock deadline.
  void set_event_limit(uint64_t events) { limit_ = events; }
  // A second budget for work that events do not measure (0: none): models charge() it (the flow
  // network: the flows of each max-min re-solve), and past it the run stops as above.
  void set_work_limit(uint64_t units) { work_limit_ = units; }
  void charge(uint64_t units) { work_ += units; }
  bool limit_reached() const {
    return (limit_ != 0 && executed_ >= limit_) || (work_limit_ != 0 && work_ >= work_limit_);
  }

  Rng& rng(uint64_t stream);
  EngineSignals& signals() { return signals_; }
  uint64_t events_executed() const { return executed_; }

 private:
  void step();
  Time now_ = Time::zero();
  EventQueue queue_;
  uint64_t seed_;
  std::map<uint64_t, Rng> rngs_;
  EngineSignals signals_;
  uint64_t executed_ = 0;
  uint64_t limit_ = 0;
  uint64_t work_ = 0, work_limit_ = 0;
  bool stop_ = false;
};

}  // namespace trainsim::sim
