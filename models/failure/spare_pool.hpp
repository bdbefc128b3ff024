#pragma once
// The spare nodes of one Monte Carlo run (monte_carlo.hpp): free nodes, failed nodes under repair
// (each back in the pool `repair` after it failed), the data-parallel replicas an elastic run has
// given up, and when the nodes the current recovery waits for are back. Times are seconds on
// the run's clock.

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace trainsim::models::failure {

class SparePool {
 public:
  SparePool(int64_t spares, double repair_s, bool elastic, int64_t dp, int64_t nodes_per_replica,
            int64_t replicas_per_node);

  // A node failed at `now` and goes to repair. Returns when the job has every node it needs: now
  // when a spare is free or an elastic run can give up the node's replicas, else when a node
  // comes back from repair; never earlier than what an earlier failure of the same recovery
  // already waits for.
  double replace(double now);
  // A spare is free at `now`, or the run can shrink instead.
  bool can_replace(double now);
  // At a restart: bring given-up replicas back while enough nodes are free.
  void restore_replicas();
  // When the nodes of the latest recovery are all back (-inf when it waits for none).
  double ready_at() const { return ready_at_; }
  int64_t lost_replicas() const { return lost_; }

 private:
  void release(double now);  // repaired nodes back to the pool
  bool can_shrink() const { return elastic_ && dp_ - lost_ - replicas_per_node_ >= 1; }

  int64_t free_;
  double repair_s_;
  bool elastic_;
  int64_t dp_, nodes_per_replica_, replicas_per_node_;
  int64_t lost_ = 0;
  double ready_at_;
  std::priority_queue<double, std::vector<double>, std::greater<double>> repairs_;
};

}  // namespace trainsim::models::failure
