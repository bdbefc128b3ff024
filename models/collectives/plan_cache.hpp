#pragma once
// Plans already made, shared between the communicators of a run and between runs (the planner's
// re-simulations). A plan is in group-local ranks: it depends on the algorithm, the op, its bytes
// and root, the algorithm's parameters and the group's shape (its servers relative to the first,
// torus dims, NVLS), never on which GPUs run it. Plans that name switches (NVLS: switch_rank of
// an absolute server) are not shared.
//
// A 256-rank ring's plan is 65,280 transfers and about 12 ms to make and order; the 405B job's
// ZeRO reduce-scatters and all-gathers make 18 of them for 5 sizes.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "models/collectives/collective.hpp"

namespace trainsim::models::collectives {

class PlanCache {
 public:
  // At most `max_transfers` transfers held (then the cache empties and starts over).
  explicit PlanCache(size_t max_transfers = size_t{1} << 22) : max_transfers_(max_transfers) {}
  // The plan for this key, made by `make` on a miss. Thread-safe (made outside the lock).
  std::shared_ptr<const CollectivePlan> get(const std::string& algorithm, const CollectiveSpec& spec,
                                            const AlgorithmParams& params, const Group& group,
                                            const std::function<CollectivePlan()>& make);
  // The process's cache (the planner's simulations share it).
  static PlanCache& shared();
  size_t hits() const;

 private:
  struct Key {
    std::string algorithm, inter_node;
    int op = 0, channels = 1;
    bool bidirectional = false, nvls = false;
    int64_t bytes = 0;
    int32_t root = 0;
    std::array<int32_t, 3> dims{};
    std::vector<int32_t> nodes;  // each rank's server minus the first server's
    friend auto operator<=>(const Key&, const Key&) = default;
  };
  mutable std::mutex mutex_;
  std::map<Key, std::shared_ptr<const CollectivePlan>> plans_;
  size_t transfers_ = 0, max_transfers_, hits_ = 0;
};

}  // namespace trainsim::models::collectives
