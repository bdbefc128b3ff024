#pragma once
// The processes taking part in a validation: one per GPU, bootstrapped with MPI when trainsim is
// built with it and started by mpirun (`mpirun -np 8 trainsim validate ...`), else a world of one.

#include <string>
#include <vector>

namespace trainsim::validator::gpu {

class World {
 public:
  // Initializes MPI when available (idempotent); picks this process's GPU (local rank modulo
  // the visible devices).
  World();
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  // Rank 0's bytes on every rank (the NCCL unique id).
  void broadcast(void* data, int bytes) const;
  // Median over ranks of each value is not needed: the slowest rank sets a collective's time.
  double max(double v) const;
  void barrier() const;
  std::string host() const;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  bool owns_mpi_ = false;
};

}  // namespace trainsim::validator::gpu
