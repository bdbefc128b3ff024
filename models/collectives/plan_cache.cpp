#include "models/collectives/plan_cache.hpp"

#include <algorithm>

namespace trainsim::models::collectives {

std::shared_ptr<const CollectivePlan> PlanCache::get(const std::string& algorithm, const CollectiveSpec& spec,
                                                     const AlgorithmParams& params, const Group& group,
                                                     const std::function<CollectivePlan()>& make) {
  Key key{algorithm,
          params.inter_node,
          static_cast<int>(spec.op),
          params.channels,
          params.bidirectional,
          group.nvls_capable,
          spec.bytes.count(),
          spec.root,
          group.dims,
          group.node_of_rank};
  if (!key.nodes.empty()) {
    const int32_t first = *std::min_element(key.nodes.begin(), key.nodes.end());
    for (int32_t& n : key.nodes) n -= first;
  }
  {
    const std::lock_guard lock(mutex_);
    if (const auto it = plans_.find(key); it != plans_.end()) {
      ++hits_;
      return it->second;
    }
  }
  auto plan = std::make_shared<const CollectivePlan>(make());
  if (plan->in_network_reduction) return plan;  // names absolute servers' switches
  size_t transfers = 0;
  for (const Step& st : plan->steps) transfers += st.transfers.size();
  const std::lock_guard lock(mutex_);
  if (transfers_ + transfers > max_transfers_) {
    plans_.clear();
    transfers_ = 0;
  }
  if (plans_.emplace(std::move(key), plan).second) transfers_ += transfers;
  return plan;
}

PlanCache& PlanCache::shared() {
  static PlanCache cache;
  return cache;
}

size_t PlanCache::hits() const {
  const std::lock_guard lock(mutex_);
  return hits_;
}

}  // namespace trainsim::models::collectives
