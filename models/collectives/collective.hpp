#pragma once
// A collective algorithm is a pure generator of steps (STYLE conv. 9): each step is a set of
// {src, dst, chunk, bytes, reduce} transfers between group-local ranks that run concurrently; a
// step starts when the previous one has finished. One shared executor (flow_executor.hpp) turns
// steps into network flows for every algorithm. Algorithms register from their own files.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/collectives/comm_model.hpp"
#include "sim/units.hpp"

namespace trainsim::models::collectives {

struct Transfer {
  int32_t src = 0, dst = 0;  // group-local ranks
  int32_t chunk = 0;         // which part of the buffer
  sim::Bytes bytes;
  bool reduce = false;  // the receiver adds into its copy (otherwise it overwrites)
};

struct Step {
  std::vector<Transfer> transfers;
};

struct CollectivePlan {
  std::vector<Step> steps;
  int32_t chunks = 1;  // the buffer is split into this many equal chunks
};

struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::kAllReduce;
  sim::Bytes bytes;  // per-rank buffer, as nccl-tests counts "size"
};

using PlanFn = std::function<CollectivePlan(const CollectiveSpec&, int32_t ranks)>;

struct AlgorithmInfo {
  std::string name;
  std::string description;
  std::vector<CollectiveOp> ops;  // supported collectives
  PlanFn plan;
  bool supports(CollectiveOp op) const;
};

class AlgorithmRegistry {
 public:
  static const AlgorithmRegistry& instance();
  // Throws ConfigError at `path` listing the valid names when unknown.
  const AlgorithmInfo& get(const std::string& name, const std::string& path) const;
  const std::vector<AlgorithmInfo>& all() const { return entries_; }
  struct Registrar {
    explicit Registrar(AlgorithmInfo info);
  };

 private:
  static AlgorithmRegistry& mutable_instance();
  std::vector<AlgorithmInfo> entries_;
};

// Replays the plan symbolically (who holds which contributions of which chunk) and throws
// InternalError unless every rank ends with the collective's result, each contribution reduced
// exactly once. Groups of up to 64 ranks.
void check_plan(const CollectiveSpec& spec, int32_t ranks, const CollectivePlan& plan);
// Bytes rank `r` sends over the whole plan.
sim::Bytes bytes_sent(const CollectivePlan& plan, int32_t r);

}  // namespace trainsim::models::collectives

#define TRAINSIM_REGISTER_COLLECTIVE(id, name, description, ops, fn)                                      \
  namespace {                                                                                             \
  const ::trainsim::models::collectives::AlgorithmRegistry::Registrar trainsim_collective_registrar_##id{ \
      ::trainsim::models::collectives::AlgorithmInfo{name, description, ops, fn}};                        \
  }
