#include "models/workload/run/slow_compute.hpp"

#include <algorithm>
#include <cmath>

#include "sim/checked.hpp"
#include "sim/error.hpp"

namespace trainsim::models::workload {

void SlowComputeRunner::slow_down(uint32_t slot, double speed, sim::Time at) {
  TRAINSIM_ASSERT(slot < slow_.size(), "unknown rank slot ", slot);
  TRAINSIM_ASSERT(speed > 0.0 && speed <= 1.0, "speed ", speed, " outside (0, 1]");
  auto& s = slow_[slot];
  s.push_back({at, speed});
  std::stable_sort(s.begin(), s.end(), [](const Slowdown& a, const Slowdown& b) { return a.at < b.at; });
}

std::vector<uint32_t> SlowComputeRunner::slots_of(const Workload& w, const Job& job, int32_t rank) {
  std::vector<uint32_t> out;
  for (uint32_t s = 0; s < w.ranks.size(); ++s)
    if (w.ranks[s].rank == rank) out.push_back(s);
  if (!out.empty()) return out;
  // Representative fidelity: the rank's stage stands for it.
  const int64_t stage = rank / (job.tp * job.cp * job.dp);
  for (uint32_t s = 0; s < w.ranks.size(); ++s)
    if (w.ranks[s].stage == stage) out.push_back(s);
  return out;
}

sim::Time SlowComputeRunner::end_time(uint32_t slot, sim::Time start, sim::Time work) const {
  const auto& s = slow_[slot];
  // Untouched unless a slowdown begins before the task would end: its exact duration.
  if (std::none_of(s.begin(), s.end(), [&](const Slowdown& d) { return d.at < start + work; })) return start + work;
  // Walk the piecewise-constant speed from `start`: full-speed work left, in ns.
  double left = static_cast<double>(work.count_ns());
  double t = static_cast<double>(start.count_ns());
  double speed = 1.0;
  size_t k = 0;
  for (; k < s.size() && s[k].at <= start; ++k) speed = std::min(speed, s[k].speed);
  for (; k < s.size(); ++k) {
    const double next = static_cast<double>(s[k].at.count_ns());
    const double can = (next - t) * speed;
    if (left <= can) break;
    left -= can;
    t = next;
    speed = std::min(speed, s[k].speed);
  }
  // Rounded up once to whole nanoseconds; a speed that stretches the task past the clock is the
  // input's error (sim/checked.hpp; --fault and the failure profile also bound the speed).
  return sim::checked_ns(std::ceil(t + left / speed));
}

void SlowComputeRunner::start(sim::task::TaskIndex i, const sim::task::Task& t, sim::task::TaskExecutor& exec) {
  sim::Engine& engine = exec.engine();
  // Host-side work (the CPU optimizer step, copy engines) does not run on the GPU's SMs.
  const bool gpu_work = t.spec.category != static_cast<uint8_t>(Category::kOffload);
  const sim::Time end =
      gpu_work ? end_time(w_.task_rank_slot[i], engine.now(), t.spec.duration) : engine.now() + t.spec.duration;
  engine.schedule_at(end, [&exec, i] { exec.complete(i); });
}

}  // namespace trainsim::models::workload
