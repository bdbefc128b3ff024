#pragma once
// Which GPUs each communicator of a rank spans, and how long a collective on it takes. Ranks
// follow Megatron's order tp-cp-dp-pp: global rank = t + tp*(c + cp*(d + dp*stage)); the expert
// layers fold the same ranks of a stage into their own etp x ep x edp grid (expert_layout.hpp).
//
// Group kinds: the TP group; the gradient group (all dp*cp ranks of a stage position, which
// share dense weights); the ZeRO shard group (dp_shard consecutive ranks of the gradient group)
// and its replica group (one rank of each shard group: HSDP / MiCS); the CP group and its
// Ulysses (cp_ulysses consecutive CP ranks) and ring (stride cp_ulysses) subgroups; the expert-TP
// group (etp consecutive ranks of the stage), the EP group (ep ranks etp apart) and the
// expert-gradient group (the expert-DP ranks holding the same expert slice).

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "models/collectives/comm_model.hpp"
#include "models/workload/dag/workload.hpp"
#include "models/workload/job/expert_layout.hpp"
#include "models/workload/job/job.hpp"

namespace trainsim::models::workload {

enum class GroupKind : uint8_t { kTp, kGrad, kShard, kReplica, kCp, kUlysses, kRing, kEp, kExpertGrad, kEtp, kCount };

// The stream of a rank a collective of this kind runs on.
sim::task::StreamId stream_of(const RankInfo& r, GroupKind k);
Category category_of(GroupKind k);

class Communicators {
 public:
  Communicators(Workload& w, const collectives::CommModel& comm, const Job& job);

  int64_t global_rank(int64_t stage, int64_t d, int64_t t, int64_t c = 0) const {
    return t + tp_ * (c + cp_ * (d + dp_ * stage));
  }
  // Members (GPU ids, ascending) of the `k` communicator of a rank.
  std::vector<int32_t> members(const RankInfo& r, GroupKind k) const;
  // Interned id of a communicator (index into Workload::groups).
  uint32_t group_id(const std::vector<int32_t>& gpus);
  // The `k` communicator of a rank slot (cached).
  uint32_t group_of(uint32_t slot, GroupKind k);
  // Time of a collective on the `k` communicator of a rank slot.
  sim::Time time(collectives::CollectiveOp op, sim::Bytes bytes, uint32_t slot, GroupKind k);
  // Time of a TP-group collective (the same for every rank).
  sim::Time tp_time(collectives::CollectiveOp op, sim::Bytes bytes) const;
  bool crosses_node(int64_t gpu_a, int64_t gpu_b) const { return gpu_a / gpn_ != gpu_b / gpn_; }
  const collectives::CommModel& model() const { return comm_; }
  // Records what task `t` moves (ops and sizes repeat, so descriptors are interned).
  void describe(sim::task::TaskIndex t, collectives::CollectiveOp op, sim::Bytes bytes, uint32_t group,
                sim::Time extra = sim::Time::zero());

 private:
  collectives::GroupPlacement placement(GroupKind k, const std::vector<int32_t>& gpus) const;

  Workload& w_;
  const collectives::CommModel& comm_;
  int64_t tp_, cp_, dp_, gpn_, shard_, ulysses_;
  ExpertLayout experts_;
  std::map<std::vector<int32_t>, uint32_t> group_ids_;
  std::vector<collectives::GroupPlacement> placements_;  // per interned group
  std::map<std::tuple<int, int64_t, uint32_t, int64_t>, uint32_t> comm_ids_;
  std::vector<std::vector<uint32_t>> cache_;  // [kind][slot] -> group id
};

}  // namespace trainsim::models::workload
