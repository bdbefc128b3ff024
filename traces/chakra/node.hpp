#pragma once
// What one Chakra node's attributes mean to trainsim (docs/traces.md): its collective and size,
// its peer, and the time of a GPU compute node on the target GPU (recorded, rescaled from the
// recorded GPU by the roofline ratio, or the roofline alone). Each reader throws ConfigError at
// "FILE:id N.attr..." with the fix when the attribute is missing or out of range.

#include <cstdint>

#include "models/collectives/comm_model.hpp"
#include "models/compute/compute_model.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "sim/units.hpp"
#include "traces/chakra/trace.hpp"

namespace trainsim::traces::chakra {

// The collective of a COMM_COLL_NODE (comm_type: the CollectiveCommType value, or its name);
// `type` receives the Chakra type. GATHER and SCATTER are not simulated; BARRIER is an all-reduce.
models::collectives::CollectiveOp collective_of(const Node& n, CommType& type);
// comm_size in bytes (required, not negative); a BARRIER moves at least 4 bytes.
int64_t comm_bytes(const Node& n);
// The peer rank in attribute `key` (comm_src / comm_dst), required and within [0, ranks).
int32_t comm_peer(const Node& n, const char* key, int32_t ranks);
// A count attribute (num_ops, tensor_size): 0 when absent or not positive.
double count_attr(const Node& n, const char* key);

// Roofline time of a kernel executing `flops` and moving `bytes` through HBM on `gpu` in
// `precision`: max(flops / (peak x efficiency), bytes / (HBM x efficiency)), no launch cost.
sim::Time roofline_time(const models::hardware::GpuSpec& gpu, models::compute::Precision precision, double flops,
                        double bytes);

// The time of a GPU COMP_NODE on `target`, and where it came from.
struct GpuTime {
  enum class Source : uint8_t { kNone, kRecorded, kRescaled, kKept, kRoofline };
  sim::Time time;
  Source source = Source::kNone;  // kNone: no time and no num_ops / tensor_size (passed over)
};
// Recorded duration_micros; with `recorded` set to another GPU than `target`, scaled by
// roof(target) / roof(recorded) when the node has num_ops or tensor_size (else kept); with no
// recorded duration, the target's roofline time plus one kernel launch.
GpuTime gpu_time(const Node& n, const models::hardware::GpuSpec& target, models::compute::Precision precision,
                 const models::hardware::GpuSpec* recorded);

}  // namespace trainsim::traces::chakra
