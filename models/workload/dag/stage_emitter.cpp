#include "models/workload/dag/stage_emitter.hpp"

#include <algorithm>

#include "sim/error.hpp"

namespace trainsim::models::workload {

using sim::task::TaskIndex;
using sim::task::TaskKind;
using sim::task::TaskSpec;

Handle StageEmitter::compute(sim::task::LabelId label, const llm::Cost& c, Category cat, int mb, int layer,
                             std::initializer_list<const Handle*> deps) {
  Handle h(members_.size());
  // The host issues an eager task's kernels one by one; a graph's with one launch.
  sim::Time duration = c.with_dispatch(dispatch_);
  if (whole_graph_) {
    duration = c.time;
  } else if (graph_) {
    duration = launched_ ? c.time : std::max(c.time, dispatch_);
    launched_ = true;
  }
  for (size_t i = 0; i < members_.size(); ++i) {
    TaskSpec s;
    s.kind = TaskKind::kCompute;
    s.label = label;
    s.category = static_cast<uint8_t>(cat);
    s.microbatch = mb;
    s.layer = layer;
    s.duration = duration;
    s.flops = c.flops;
    h[i] = add(s, w_.ranks[members_[i]].compute, members_[i]);
  }
  link(deps, h);
  for (const Handle& g : gates_) link(g, h);
  gates_.clear();
  if (capturing_ && captured_.empty()) captured_ = h;
  return h;
}

Handle StageEmitter::collective(sim::task::LabelId label, GroupKind kind, collectives::CollectiveOp op,
                                sim::Bytes bytes, int mb, int layer, std::initializer_list<const Handle*> deps) {
  Handle h(members_.size());
  // Members sharing a communicator share the task; ids are interned, so equal ids = one group.
  // Groups are emitted in order of their first member.
  runs_.clear();
  run_of_.clear();
  for (size_t i = 0; i < members_.size(); ++i) {
    const uint32_t gid = comms_.group_of(members_[i], kind);
    auto [it, fresh] = run_of_.try_emplace(gid, static_cast<uint32_t>(runs_.size()));
    if (fresh) runs_.push_back({gid, {}});
    runs_[it->second].second.push_back(static_cast<uint32_t>(i));
  }
  for (const auto& [gid, idx] : runs_) {
    streams_.clear();
    for (const uint32_t k : idx) streams_.push_back(stream_of(w_.ranks[members_[k]], kind));
    const uint32_t first = members_[idx.front()];
    TaskSpec s;
    s.kind = TaskKind::kCollective;
    s.label = label;
    s.category = static_cast<uint8_t>(category_of(kind));
    s.microbatch = mb;
    s.layer = layer;
    s.duration = comms_.time(op, bytes, first, kind);
    s.bytes = bytes;
    const TaskIndex t = streams_.size() == 1 ? add(s, streams_.front(), first) : add(s, streams_, first);
    comms_.describe(t, op, bytes, gid);
    for (const uint32_t k : idx) h[k] = t;
  }
  link(deps, h);
  return h;
}

Handle StageEmitter::host(bool to_host, sim::task::LabelId label, sim::Time duration, sim::Bytes bytes, int mb,
                          std::initializer_list<const Handle*> deps) {
  Handle h(members_.size());
  for (size_t i = 0; i < members_.size(); ++i) {
    TaskSpec s;
    s.kind = TaskKind::kCompute;  // a fixed duration: the copy engine or the host CPU
    s.label = label;
    s.category = static_cast<uint8_t>(Category::kOffload);
    s.microbatch = mb;
    s.duration = duration;
    s.bytes = bytes;
    const RankInfo& r = w_.ranks[members_[i]];
    h[i] = add(s, to_host ? r.d2h : r.h2d, members_[i]);
  }
  link(deps, h);
  return h;
}

void StageEmitter::link(const Handle& from, const Handle& to) {
  if (from.empty()) return;
  TRAINSIM_ASSERT(from.size() == to.size(), "handle size mismatch");
  pairs_.clear();
  for (size_t i = 0; i < to.size(); ++i) pairs_.emplace_back(from[i], to[i]);
  std::sort(pairs_.begin(), pairs_.end());
  pairs_.erase(std::unique(pairs_.begin(), pairs_.end()), pairs_.end());
  for (const auto& [a, b] : pairs_) g_.add_dep(a, b);
}

void StageEmitter::memory(const Handle& h, bool at_start, int64_t bytes) {
  for (size_t i = 0; i < members_.size(); ++i)
    w_.memory_events.push_back(memory::TimelineEvent{h[i], at_start, bytes, members_[i]});
}

}  // namespace trainsim::models::workload
