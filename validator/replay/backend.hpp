#pragma once
// What executes a rank's ops in a replay (executor.hpp). Two implementations:
//   - mpi_backend.cpp, the CPU backend: OpenMPI non-blocking point-to-point and collectives on
//     per-group communicators, compute as timed waits of the simulated duration (scaled); it runs
//     on any machine, in CI, and is how the DAG itself is validated;
//   - gpu/replay_backend.cpp, on CUDA machines: NCCL communicators split per group exactly as the
//     job's layout makes them, GEMM-bound compute as cuBLASLt GEMMs of the op's FLOPs (device-side
//     waits of its simulated duration for the others), each stream a CUDA stream.
// Every call that waits is bounded by the executor's timeout; a backend never blocks inside
// start() or done().

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "validator/replay/program.hpp"

namespace trainsim::validator::replay {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu (OpenMPI)", "gpu (CUDA + NCCL)"
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Creates this rank's communicators (every rank calls it with the same program).
  virtual void setup(const Program& program) = 0;
  // Starts op `i` of this rank's program (non-blocking); `scale` multiplies simulated durations.
  virtual void start(uint32_t i, const Op& op, double scale) = 0;
  // Whether op `i` has completed (polls; never blocks). Throws ReplayError when the op's
  // partners disagree on what it is (another collective, another size).
  virtual bool done(uint32_t i) = 0;
  // Seconds on this rank's clock, aligned across ranks by synchronize().
  virtual double now() const = 0;
  // Every rank reaches this point, and the clocks restart together.
  virtual void synchronize() = 0;
  // Every rank's bytes, in rank order, at rank 0 (others get an empty vector).
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
  // Whether the device orders ops itself (CUDA streams and events): then an op may be started
  // once the ops it follows are started, not finished, as a framework enqueues its kernels, and
  // the backend makes it wait for them on the device.
  virtual bool orders_on_device() const { return false; }
  // The device's own start and end times of a completed op (seconds since synchronize()), when
  // the backend measures them; otherwise the executor's host-side times stand.
  virtual bool device_times(uint32_t /*i*/, double& /*start*/, double& /*end*/) const { return false; }
};

// A replay that cannot go on: a mismatch between partners, or a wait past the timeout.
class ReplayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace trainsim::validator::replay
