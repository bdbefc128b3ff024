#pragma once
// Forward declarations of trainsim::planner::emit.

namespace trainsim::sim {
template <typename Info>
class Registry;
}  // namespace trainsim::sim

namespace trainsim::planner::emit {
struct EmittedFile;
struct EmitterInfo;
using EmitterRegistry = sim::Registry<EmitterInfo>;  // sim/registry.hpp
}  // namespace trainsim::planner::emit
