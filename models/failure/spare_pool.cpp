#include "models/failure/spare_pool.hpp"

#include <algorithm>
#include <limits>

namespace trainsim::models::failure {

SparePool::SparePool(int64_t spares, double repair_s, bool elastic, int64_t dp, int64_t nodes_per_replica,
                     int64_t replicas_per_node)
    : free_(spares),
      repair_s_(repair_s),
      elastic_(elastic),
      dp_(dp),
      nodes_per_replica_(nodes_per_replica),
      replicas_per_node_(replicas_per_node),
      ready_at_(-std::numeric_limits<double>::infinity()) {}

void SparePool::release(double now) {
  while (!repairs_.empty() && repairs_.top() <= now) {
    repairs_.pop();
    ++free_;
  }
}

bool SparePool::can_replace(double now) {
  release(now);
  return free_ > 0 || can_shrink();
}

double SparePool::replace(double now) {
  release(now);
  repairs_.push(now + repair_s_);
  double ready = now;
  if (free_ > 0) {
    --free_;
  } else if (can_shrink()) {
    // Go on without the failed node's replicas; their healthy nodes become spares.
    lost_ += replicas_per_node_;
    free_ += nodes_per_replica_ - 1;
  } else {
    // Wait for the first node back from repair (perhaps the failed one itself).
    ready = repairs_.top();
    repairs_.pop();
  }
  ready_at_ = std::max(ready_at_, ready);
  return ready_at_;
}

void SparePool::restore_replicas() {
  while (lost_ > 0 && free_ >= nodes_per_replica_) {
    free_ -= nodes_per_replica_;
    lost_ = std::max<int64_t>(0, lost_ - replicas_per_node_);
  }
}

}  // namespace trainsim::models::failure
