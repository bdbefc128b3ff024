#pragma once
// The memory counters' fixed part for a simulated job: per rank slot of the workload, the static
// device memory (weights, gradients, optimizer states, buffers of its stage's memory report) and
// the usable capacity, for ChromeTraceRecorder::set_memory.

#include <vector>

#include "models/workload/dag/workload.hpp"
#include "models/workload/job/job.hpp"
#include "traces/sinks/chrome_trace.hpp"

namespace trainsim::traces {

std::vector<ChromeTraceRecorder::MemorySlot> memory_slots(const models::workload::Job& job,
                                                          const models::workload::Workload& w);

}  // namespace trainsim::traces
