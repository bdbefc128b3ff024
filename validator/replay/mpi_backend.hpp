#pragma once
// The CPU replay backend (backend.hpp): ranks are MPI processes (`mpirun -np N`; without mpirun a
// world of one), compute ops are timed waits of their simulated duration times the time scale,
// and communication is OpenMPI's non-blocking point-to-point and collectives, on one communicator
// per group of the plan (MPI_Comm_create_group over exactly the group's ranks).
//
// Each message carries what its task is: a transfer sends (task, bytes) ahead of its payload and
// the receiver compares them with its own op; a collective all-gathers every member's (task, op,
// bytes) beside the data, so a member that issued another collective, or another size, is named.
// Payloads are capped (`payload_cap` bytes; the check is on the simulated bytes, not the payload).
// MPI must already be initialised when launched by mpirun (the CLI does it).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "validator/replay/backend.hpp"

namespace trainsim::validator::replay {

// Whether this build has MPI (OpenMPI found at configure time).
bool have_mpi();

class MpiBackend final : public Backend {
 public:
  // `timeout_s` bounds the start barrier and the final gather (the executor bounds the ops).
  explicit MpiBackend(int64_t payload_cap = 256 * 1024, double timeout_s = 60);
  ~MpiBackend() override;
  std::string name() const override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void setup(const Program& program) override;
  void start(uint32_t i, const Op& op, double scale) override;
  bool done(uint32_t i) override;
  double now() const override;
  void synchronize() override;
  std::vector<std::string> gather(const std::string& mine) override;

 private:
  struct Impl;  // communicators and requests: mpi.h stays in the .cpp
  std::unique_ptr<Impl> impl_;
  int rank_ = 0, size_ = 1;
};

}  // namespace trainsim::validator::replay
