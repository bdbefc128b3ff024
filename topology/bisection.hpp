#pragma once
// Bisection bandwidth: the least capacity, per direction, that separates one half of the GPUs
// from the other. Structured builders set a closed form on the Topology (computed for the
// partition into whole halves of their units: servers, leaves, pods, groups, torus slabs).
// Without one (explicit graphs, single servers), it is approximated by the maximum flow from
// the first half of the GPUs (by index) to the second (push-relabel; equal to the minimum cut
// of that partition, an upper bound on the true bisection, exact for the symmetric node fabrics).

#include "sim/units.hpp"
#include "topology/fwd.hpp"

namespace trainsim::topology {

// Max flow from GPUs [0, n/2) to GPUs [n/2, n) over effective link capacities.
sim::Bandwidth index_halves_min_cut(const Topology& t);
// The builder's closed form when it has one, else index_halves_min_cut.
sim::Bandwidth bisection_bandwidth(const Topology& t);

}  // namespace trainsim::topology
