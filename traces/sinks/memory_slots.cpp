#include "traces/sinks/memory_slots.hpp"

#include "models/workload/run/simulate.hpp"

namespace trainsim::traces {

std::vector<ChromeTraceRecorder::MemorySlot> memory_slots(const models::workload::Job& job,
                                                          const models::workload::Workload& w) {
  const std::vector<models::workload::StageReport> stages = models::workload::stage_memory_reports(job);
  const int64_t capacity = (job.gpu.memory - job.gpu.reserved_memory).count();
  std::vector<ChromeTraceRecorder::MemorySlot> slots;
  slots.reserve(w.ranks.size());
  for (const models::workload::RankInfo& r : w.ranks) {
    const auto& m = stages[static_cast<size_t>(r.stage)].memory;
    slots.push_back({r.rank, (m.weights + m.gradients + m.optimizer + m.buffers).count(), capacity});
  }
  return slots;
}

}  // namespace trainsim::traces
