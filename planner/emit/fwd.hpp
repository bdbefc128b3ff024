#pragma once
// Forward declarations of trainsim::planner::emit.

namespace trainsim::planner::emit {
struct EmittedFile;
struct EmitterInfo;
class EmitterRegistry;
}  // namespace trainsim::planner::emit
