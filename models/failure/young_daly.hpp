#pragma once
// Closed forms for checkpointing under exponential failures of mean time between failures M,
// checkpoint cost delta and restart cost R (all in the same time unit):
//   Young (1974):  tau = sqrt(2 delta M)
//   Daly (2006), higher order: tau = sqrt(2 delta M) (1 + sqrt(delta/2M)/3 + (delta/2M)/9) - delta
//                  for delta < 2M, else tau = M
//   Daly's expected wall clock for W of work in segments of tau, failures also striking during
//   checkpoints and restarts:  T = M e^(R/M) (e^((tau+delta)/M) - 1) W / tau
// trainsim's Monte Carlo reproduces the last exactly under those assumptions (tests).

#include "sim/units.hpp"

namespace trainsim::models::failure {

sim::Time young_interval(sim::Time delta, sim::Time mtbf);
sim::Time daly_interval(sim::Time delta, sim::Time mtbf);
sim::Time daly_expected_time(sim::Time work, sim::Time interval, sim::Time delta, sim::Time restart, sim::Time mtbf);

}  // namespace trainsim::models::failure
