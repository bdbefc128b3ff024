#pragma once
// Small helpers shared by the files of the collective registry (models/collectives/*.cpp in
// trainsim_models_registry); not for algorithms or callers.

#include <cstdint>

#include "models/collectives/comm_model.hpp"

namespace trainsim::models::collectives::internal {

// A copy of a chunk: (holder, chunk) as one key, holder a group rank or a switch pseudo-rank.
inline int64_t copy_key(int32_t holder, int32_t chunk) {
  return (static_cast<int64_t>(holder) << 32) | static_cast<int64_t>(static_cast<uint32_t>(chunk));
}

}  // namespace trainsim::models::collectives::internal
