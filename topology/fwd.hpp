#pragma once
// Forward declarations of trainsim::topology, to keep includes light.

#include <cstdint>

namespace trainsim::sim {
template <typename Info>
class Registry;
}  // namespace trainsim::sim

namespace trainsim::topology {

using LinkId = uint32_t;
enum class NodeKind : uint8_t;
class Topology;
struct BuilderInfo;
using BuilderRegistry = sim::Registry<BuilderInfo>;  // sim/registry.hpp
struct ServerFabric;
struct RoutingParams;
struct Route;
class Router;
struct Summary;

}  // namespace trainsim::topology
