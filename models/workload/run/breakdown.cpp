#include "models/workload/run/breakdown.hpp"

#include <algorithm>

namespace trainsim::models::workload {

TimeBreakdown rank_breakdown(const Workload& w, const sim::task::TaskExecutor& exec, uint32_t slot, sim::Time end) {
  const RankInfo& r = w.ranks[slot];
  const auto& g = w.graph;
  TimeBreakdown b;
  // Each stream runs its tasks one at a time in order, so its busy intervals are sorted and
  // disjoint: a merge of four sorted boundary lists replaces a global sort.
  // Priority order; absent streams (kNoStream) are skipped.
  constexpr int kMax = 8;
  const sim::task::StreamId all[kMax] = {r.compute, r.tp, r.cp, r.ep, r.pp, r.dp, r.d2h, r.h2d};
  sim::Time* slot_of[kMax] = {nullptr,       &b.tp_exposed, &b.cp_exposed,      &b.ep_exposed,
                              &b.pp_exposed, &b.dp_exposed, &b.offload_exposed, &b.offload_exposed};
  sim::task::StreamId streams[kMax];
  sim::Time* exposed_to[kMax];
  int n = 0;
  for (int k = 0; k < kMax; ++k)
    if (all[k] != kNoStream) {
      streams[n] = all[k];
      exposed_to[n++] = slot_of[k];
    }
  struct Cursor {
    const sim::BigVector<sim::task::TaskIndex>* tasks;
    size_t next = 0;
    bool inside = false;
    int64_t boundary(const sim::task::TaskExecutor& ex) const {
      const sim::task::TaskIndex i = (*tasks)[next];
      return (inside ? ex.end_time(i) : ex.start_time(i)).count_ns();
    }
  };
  Cursor cur[kMax];
  for (int k = 0; k < n; ++k) cur[k].tasks = &g.stream_tasks(streams[k]);
  for (const sim::task::TaskIndex i : g.stream_tasks(r.compute)) {
    const sim::Time d = exec.end_time(i) - exec.start_time(i);
    const uint8_t cat = g.task(i).spec.category;
    if (cat == static_cast<uint8_t>(Category::kHostSync)) {
      b.host_sync += d;
      continue;
    }
    b.compute += d;
    if (cat == static_cast<uint8_t>(Category::kRecompute)) b.recompute += d;
    b.flops += g.task(i).spec.flops;
  }
  int64_t cursor = 0;
  int64_t exposed[kMax] = {}, idle = 0;
  const int64_t stop = end.count_ns();
  while (true) {
    int pick = -1;
    int64_t t = stop;
    for (int k = 0; k < n; ++k) {
      if (cur[k].next >= cur[k].tasks->size()) continue;
      const int64_t x = cur[k].boundary(exec);
      if (x < t || (x == t && pick < 0)) t = x, pick = k;
    }
    // Attribute [cursor, t) to the highest-priority busy stream, else idle.
    if (t > cursor) {
      int busy = -1;
      for (int k = 0; k < n && busy < 0; ++k)
        if (cur[k].inside) busy = k;
      if (busy < 0)
        idle += t - cursor;
      else if (busy > 0)
        exposed[busy] += t - cursor;
      cursor = t;
    }
    if (pick < 0) break;
    Cursor& c = cur[pick];
    if (c.inside) ++c.next;
    c.inside = !c.inside;
  }
  for (int k = 1; k < n; ++k) *exposed_to[k] += sim::Time::ns(exposed[k]);
  b.bubble = sim::Time::ns(idle);
  return b;
}

sim::config::Json TimeBreakdown::to_json() const {
  return sim::config::Json{{"compute_s", compute.seconds()},
                           {"recompute_s", recompute.seconds()},
                           {"host_sync_s", host_sync.seconds()},
                           {"tp_exposed_s", tp_exposed.seconds()},
                           {"pp_exposed_s", pp_exposed.seconds()},
                           {"dp_exposed_s", dp_exposed.seconds()},
                           {"cp_exposed_s", cp_exposed.seconds()},
                           {"ep_exposed_s", ep_exposed.seconds()},
                           {"offload_exposed_s", offload_exposed.seconds()},
                           {"bubble_s", bubble.seconds()}};
}

}  // namespace trainsim::models::workload
