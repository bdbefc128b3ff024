#pragma once
// Forward declarations of trainsim::topology, to keep includes light.

#include <cstdint>

namespace trainsim::topology {

using LinkId = uint32_t;
enum class NodeKind : uint8_t;
class Topology;
struct BuilderInfo;
class BuilderRegistry;
struct ServerFabric;
struct RoutingParams;
struct Route;
class Router;
struct Summary;

}  // namespace trainsim::topology
