#include "sim/engine.hpp"

#include "sim/deadline.hpp"
#include "sim/error.hpp"

namespace trainsim::sim {

EventId Engine::schedule_at(Time at, Callback cb) {
  TRAINSIM_ASSERT(at >= now_, "event scheduled in the past: ", at.count_ns(), " ns < now ", now_.count_ns(), " ns");
  if (at.is_infinite()) throw_time_overflow();  // a duration from input values overflowed
  return queue_.push(at, std::move(cb));
}

void Engine::step() {
  Time at;
  Callback cb = queue_.pop(at);
  TRAINSIM_ASSERT(at >= now_, "time went backwards");
  now_ = at;
  if ((++executed_ & 0xffff) == 0) check_deadline();  // every 65,536 events: about 10-30 ms
  cb();
}

uint64_t Engine::run() {
  const uint64_t before = executed_;
  while (!stop_ && queue_.has_next() && !limit_reached()) step();
  stop_ = false;
  return executed_ - before;
}

uint64_t Engine::run_until(Time limit) {
  const uint64_t before = executed_;
  while (!stop_ && queue_.has_next() && queue_.next_time() <= limit && !limit_reached()) step();
  stop_ = false;
  return executed_ - before;
}

Rng& Engine::rng(uint64_t stream) {
  auto it = rngs_.find(stream);
  if (it == rngs_.end()) it = rngs_.emplace(stream, Rng(seed_, stream)).first;
  return it->second;
}

}  // namespace trainsim::sim
