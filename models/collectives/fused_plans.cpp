// Fused plans for the flow network's fast mode (fused_plans.hpp).
#include "models/collectives/fused_plans.hpp"

#include <algorithm>

#include "sim/error.hpp"

namespace trainsim::models::collectives {

namespace {

// Bytes of the chunks in the cyclic range [start, start + len) of n chunks cut as split_bytes cuts
// `total` (the first total mod n chunks one byte larger).
sim::Bytes range_bytes(sim::Bytes total, int64_t n, int64_t start, int64_t len) {
  const int64_t base = total.count() / n, rest = total.count() % n;
  const auto below = [rest](int64_t lo, int64_t hi) { return std::max<int64_t>(0, std::min(hi, rest) - lo); };
  const int64_t end = start + len;
  const int64_t larger = end <= n ? below(start, end) : below(start, n) + below(0, end - n);
  return sim::Bytes(base * len + larger);
}

// Appends a fused ring over `members` (group ranks in ring order) from plan step `first`; the
// first super-step's transfer out of position a also waits for first_after[a] when given.
// Returns the step after the ring's last.
size_t append_fused_ring(CollectivePlan& p, size_t first, const std::vector<int32_t>& members, CollectiveOp op,
                         sim::Bytes bytes, int32_t max_steps, const std::vector<TransferRef>& first_after) {
  const auto n = static_cast<int64_t>(members.size());
  if (n <= 1) return first;
  const bool ar = op == CollectiveOp::kAllReduce;
  TRAINSIM_ASSERT(ar || op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter,
                  "a fused ring runs all-reduce, all-gather or reduce-scatter, not ", to_string(op));
  const int64_t per_phase = std::max<int64_t>(1, std::min<int64_t>(n - 1, max_steps / (ar ? 2 : 1)));
  size_t step = first;
  bool head = true;
  for (int phase = 0; phase < (ar ? 2 : 1); ++phase) {
    const bool reduce = op == CollectiveOp::kReduceScatter || (ar && phase == 0);
    int64_t k0 = 0;
    for (int64_t s = 0; s < per_phase; ++s) {
      // Super-step s of the phase: ring steps [k0, k0 + len), the first (n - 1) mod per_phase longer.
      const int64_t len = (n - 1) / per_phase + (s < (n - 1) % per_phase ? 1 : 0);
      if (p.steps.size() <= step) p.steps.resize(step + 1);
      auto& transfers = p.steps[step].transfers;
      for (int64_t a = 0; a < n; ++a) {
        // Reduce-scatter: position a sends block (a - k - 1) in step k; all-gather block (a - k).
        const int64_t start = (((a - k0 - len + (reduce ? 0 : 1)) % n) + n) % n;
        Transfer t{members[static_cast<size_t>(a)], members[static_cast<size_t>((a + 1) % n)],
                   static_cast<int32_t>((start + len - 1) % n), range_bytes(bytes, n, start, len), reduce};
        t.steps = static_cast<int32_t>(len);
        if (!head) {
          t.after.push_back({static_cast<int32_t>(step - 1), static_cast<int32_t>((a + n - 1) % n)});
        } else if (!first_after.empty()) {
          t.after.push_back(first_after[static_cast<size_t>(a)]);
        }
        transfers.push_back(std::move(t));
      }
      head = false;
      k0 += len;
      ++step;
    }
  }
  return step;
}

}  // namespace

CollectivePlan fused_ring(CollectiveOp op, sim::Bytes bytes, int32_t n, int32_t max_steps) {
  CollectivePlan p;
  p.ranks = n;
  detail::set_chunks(p, bytes, std::max(n, 1));
  std::vector<int32_t> members(static_cast<size_t>(n));
  for (int32_t r = 0; r < n; ++r) members[static_cast<size_t>(r)] = r;
  append_fused_ring(p, 0, members, op, bytes, max_steps, {});
  return p;
}

CollectivePlan hierarchical_representative(const CollectiveSpec& spec, const Group& group) {
  TRAINSIM_ASSERT(spec.op == CollectiveOp::kAllReduce, "hierarchical is an all-reduce");
  TRAINSIM_ASSERT(group.ranks_per_node() > 0, "hierarchical needs as many ranks on every server");
  const auto servers = group.ranks_by_node();
  const auto m = static_cast<int32_t>(servers.size());
  const auto g = static_cast<int32_t>(servers.front().size());
  TRAINSIM_ASSERT(m >= 2, "a hierarchical representative spans servers");
  CollectivePlan p;
  p.ranks = group.size;
  // The whole plan's chunks: shard l is chunks l*m .. l*m + m - 1, the ring's blocks of it.
  detail::set_chunks(p, spec.bytes, g);
  const std::vector<sim::Bytes> block = detail::split_bytes(p.chunk_bytes.front(), m);
  p.chunks = g * m;
  p.chunk_bytes.clear();
  for (const sim::Bytes shard : detail::split_bytes(spec.bytes, g))
    for (const sim::Bytes b : detail::split_bytes(shard, m)) p.chunk_bytes.push_back(b);
  const auto on = [&](int32_t server, int32_t local) {
    return servers[static_cast<size_t>(server)][static_cast<size_t>(local)];
  };
  const auto ref = [](size_t step, int32_t index) { return TransferRef{static_cast<int32_t>(step), index}; };
  // Reduce-scatter inside server 0, block by block: shard 0 leaves local rank 1 and ends, summed,
  // at local rank 0 (step k: local k + 1 adds into local k + 2).
  for (int32_t k = 0; k + 1 < g; ++k) {
    p.steps.emplace_back();
    for (int32_t c = 0; c < m; ++c) {
      Transfer t{on(0, (k + 1) % g), on(0, (k + 2) % g), c, block[static_cast<size_t>(c)], true};
      if (k > 0) t.after.push_back(ref(p.steps.size() - 2, c));
      p.steps.back().transfers.push_back(std::move(t));
    }
  }
  const size_t rs_last = p.steps.size() - 1, ring = p.steps.size();  // rs_last: only with g > 1
  // Ring position 0 between the servers' local ranks 0: block -k-1 in reduce-scatter step k, block
  // -j in all-gather step j, each sent once it came in from position m - 1 (the image of position
  // 0's previous transfer) and, in the reduce-scatter, once server 0 has summed it.
  for (int32_t k = 0; k < 2 * (m - 1); ++k) {
    const bool reduce = k < m - 1;
    const int32_t b = ((reduce ? -k - 1 : -(k - (m - 1))) % m + m) % m;
    Transfer t{on(0, 0), on(1, 0), b, block[static_cast<size_t>(b)], reduce};
    if (k > 0) t.after.push_back(ref(p.steps.size() - 1, 0));
    if (reduce && g > 1) t.after.push_back(ref(rs_last, b));
    p.steps.push_back(Step{{std::move(t)}});
  }
  // All-gather inside server 0, block by block as each arrives final at local rank 0: block 0 at
  // the end of the ring's reduce-scatter, block m - 1 - j in its all-gather step j.
  for (int32_t k = 0; k + 1 < g; ++k) {
    p.steps.emplace_back();
    for (int32_t c = 0; c < m; ++c) {
      Transfer t{on(0, k), on(0, k + 1), c, block[static_cast<size_t>(c)], false};
      const size_t arrives = ring + static_cast<size_t>(c == 0 ? m - 2 : 2 * m - 2 - c);
      t.after.push_back(k == 0 ? ref(arrives, 0) : ref(p.steps.size() - 2, c));
      p.steps.back().transfers.push_back(std::move(t));
    }
  }
  return p;
}

}  // namespace trainsim::models::collectives
