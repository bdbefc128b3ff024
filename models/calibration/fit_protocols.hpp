#pragma once
// Per-protocol scales of NCCL's tuning model (the cluster's `nccl` object, docs/network.md) fitted
// to collectives measured with one protocol pinned (Measurement::protocol, from NCCL_PROTO).

#include <vector>

#include "models/calibration/fit.hpp"
#include "models/calibration/measurement.hpp"

namespace trainsim::models::calibration {

// For each protocol with records of at least 2 sizes on more than one rank: least squares of
// t - collective_launch = a x latency + b x bytes / bandwidth over NCCL's uncalibrated ring table
// entries (latency scale a, bandwidth scale 1 / b), written into result.cluster.nccl and reported
// as parameters "nccl.<protocol>.latency" / ".bandwidth". Needs result.has_cluster.
void fit_protocol_scales(const std::vector<Measurement>& items, FitResult& result);

}  // namespace trainsim::models::calibration
