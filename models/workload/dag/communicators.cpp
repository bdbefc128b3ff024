#include "models/workload/dag/communicators.hpp"

#include <algorithm>

namespace trainsim::models::workload {

using collectives::CollectiveOp;
using collectives::GroupPlacement;

sim::task::StreamId stream_of(const RankInfo& r, GroupKind k) {
  switch (k) {
    case GroupKind::kTp:
    case GroupKind::kEtp: return r.tp;
    case GroupKind::kCp:
    case GroupKind::kUlysses:
    case GroupKind::kRing: return r.cp;
    case GroupKind::kEp: return r.ep;
    default: return r.dp;
  }
}

Category category_of(GroupKind k) {
  switch (k) {
    case GroupKind::kTp:
    case GroupKind::kEtp: return Category::kTpComm;
    case GroupKind::kCp:
    case GroupKind::kUlysses:
    case GroupKind::kRing: return Category::kCpComm;
    case GroupKind::kEp: return Category::kEpComm;
    default: return Category::kDpComm;
  }
}

Communicators::Communicators(Workload& w, const collectives::CommModel& comm, const Job& job)
    : w_(w),
      comm_(comm),
      tp_(job.tp),
      cp_(job.cp),
      dp_(job.dp),
      gpn_(job.cluster.domain_gpus()),
      shard_(job.dp_shard),
      ulysses_(job.cp_ulysses),
      experts_(expert_layout(job)),
      cache_(static_cast<size_t>(GroupKind::kCount)) {}

std::vector<int32_t> Communicators::members(const RankInfo& r, GroupKind k) const {
  std::vector<int32_t> out;
  const int64_t s = r.stage, d = r.dp_index, t = r.tp_index, c = r.cp_index;
  auto add = [&](int64_t dd, int64_t tt, int64_t cc) {
    out.push_back(static_cast<int32_t>(global_rank(s, dd, tt, cc)));
  };
  // Position in the gradient group (the dp*cp ranks sharing dense weights): j = c + cp*d.
  const int64_t j = c + cp_ * d, dpc = dp_ * cp_;
  auto add_j = [&](int64_t jj) { add(jj / cp_, t, jj % cp_); };
  switch (k) {
    case GroupKind::kTp:
      for (int64_t x = 0; x < tp_; ++x) add(d, x, c);
      break;
    case GroupKind::kGrad:
      for (int64_t x = 0; x < dpc; ++x) add_j(x);
      break;
    case GroupKind::kShard:
      for (int64_t x = j / shard_ * shard_; x < (j / shard_ + 1) * shard_; ++x) add_j(x);
      break;
    case GroupKind::kReplica:
      for (int64_t x = j % shard_; x < dpc; x += shard_) add_j(x);
      break;
    case GroupKind::kCp:
      for (int64_t x = 0; x < cp_; ++x) add(d, t, x);
      break;
    case GroupKind::kUlysses:
      for (int64_t x = c / ulysses_ * ulysses_; x < (c / ulysses_ + 1) * ulysses_; ++x) add(d, t, x);
      break;
    case GroupKind::kRing:
      for (int64_t x = c % ulysses_; x < cp_; x += ulysses_) add(d, t, x);
      break;
    case GroupKind::kEtp:
    case GroupKind::kEp:
    case GroupKind::kExpertGrad: {
      const ExpertLayout& x = experts_;
      const ExpertLayout::Expert me = x.expert(x.local(t, c, d));
      const int64_t n = k == GroupKind::kEtp ? x.etp : k == GroupKind::kEp ? x.ep : x.edp();
      for (int64_t i = 0; i < n; ++i) {
        ExpertLayout::Expert peer = me;
        (k == GroupKind::kEtp ? peer.et : k == GroupKind::kEp ? peer.e : peer.ed) = i;
        const ExpertLayout::Attention a = x.attention(x.local(peer));
        add(a.d, a.t, a.c);
      }
      break;
    }
    case GroupKind::kCount: break;
  }
  return out;
}

GroupPlacement Communicators::placement(GroupKind k, const std::vector<int32_t>& gpus) const {
  if (k == GroupKind::kTp) return GroupPlacement{tp_, std::min(tp_, gpn_)};
  if (k == GroupKind::kGrad || (k == GroupKind::kShard && shard_ == dp_ * cp_)) {
    // Gradient-group peers are tp ranks apart: per node, gpn/tp of them when tp < gpn.
    const int64_t dpc = dp_ * cp_;
    const int64_t per_node = tp_ >= gpn_ ? 1 : std::min(dpc, gpn_ / tp_);
    return GroupPlacement{dpc, std::max<int64_t>(per_node, 1)};
  }
  const int64_t node = gpus.front() / gpn_;
  const int64_t per_node = std::count_if(gpus.begin(), gpus.end(), [&](int32_t g) { return g / gpn_ == node; });
  return GroupPlacement{static_cast<int64_t>(gpus.size()), std::max<int64_t>(per_node, 1)};
}

uint32_t Communicators::group_id(const std::vector<int32_t>& gpus) {
  auto it = group_ids_.find(gpus);
  if (it == group_ids_.end()) {
    it = group_ids_.emplace(gpus, static_cast<uint32_t>(w_.groups.size())).first;
    w_.groups.push_back(gpus);
    placements_.push_back(GroupPlacement{static_cast<int64_t>(gpus.size()), 1});
  }
  return it->second;
}

uint32_t Communicators::group_of(uint32_t slot, GroupKind k) {
  auto& cache = cache_[static_cast<size_t>(k)];
  if (cache.size() <= slot) cache.resize(slot + 1, Workload::kNoComm);
  if (cache[slot] == Workload::kNoComm) {
    const std::vector<int32_t> gpus = members(w_.ranks[slot], k);
    cache[slot] = group_id(gpus);
    placements_[cache[slot]] = placement(k, gpus);
  }
  return cache[slot];
}

sim::Time Communicators::time(CollectiveOp op, sim::Bytes bytes, uint32_t slot, GroupKind k) {
  return comm_.collective(op, bytes, placements_[group_of(slot, k)]);
}

sim::Time Communicators::tp_time(CollectiveOp op, sim::Bytes bytes) const {
  return comm_.collective(op, bytes, GroupPlacement{tp_, std::min(tp_, gpn_)});
}

void Communicators::describe(sim::task::TaskIndex t, CollectiveOp op, sim::Bytes bytes, uint32_t group,
                             sim::Time extra) {
  const auto key = std::make_tuple(static_cast<int>(op), bytes.count(), group, extra.count_ns());
  auto it = comm_ids_.find(key);
  if (it == comm_ids_.end()) {
    it = comm_ids_.emplace(key, static_cast<uint32_t>(w_.comms.size())).first;
    w_.comms.push_back(CommInfo{op, bytes, group, extra});
  }
  if (w_.task_comm.size() <= t) w_.task_comm.resize(t + 1, Workload::kNoComm);
  w_.task_comm[t] = it->second;
}

}  // namespace trainsim::models::workload
