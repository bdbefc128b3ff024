// derive_dependencies: each transfer's `after` list from the data flow of the plan.
#include <algorithm>
#include <unordered_map>

#include "models/collectives/collective.hpp"
#include "models/collectives/registry_internal.hpp"

namespace trainsim::models::collectives {

using internal::copy_key;

void derive_dependencies(CollectivePlan& plan) {
  // Per copy of a chunk (holder, chunk) since its last overwrite: that overwrite, the reductions
  // into it, and the transfers that read it.
  struct Copy {
    std::vector<TransferRef> overwrite;  // zero or one
    std::vector<TransferRef> reductions;
    std::vector<TransferRef> reads;
  };
  // The copies in a flat table indexed by (holder, chunk) when it is small enough (holders are
  // ranks and switch pseudo-ranks, chunks the plan's), else in a hash map: the same answers,
  // the table without hashing (a 1,024-rank ring's plan looks copies up 4 M times).
  int32_t lo = 0, hi = 0;
  for (const Step& st : plan.steps)
    for (const Transfer& t : st.transfers) {
      lo = std::min({lo, t.src, t.dst});
      hi = std::max({hi, t.src, t.dst});
    }
  const int64_t holders = static_cast<int64_t>(hi) - lo + 1, chunks = std::max(plan.chunks, 1);
  const bool flat = holders * chunks <= (int64_t{1} << 22);
  std::vector<Copy> table(flat ? static_cast<size_t>(holders * chunks) : 0);
  std::unordered_map<int64_t, Copy> map;  // looked up only, never iterated
  const auto find = [&](int32_t holder, int32_t chunk) -> Copy* {
    if (flat) return &table[static_cast<size_t>((static_cast<int64_t>(holder) - lo) * chunks + chunk)];
    const auto it = map.find(copy_key(holder, chunk));
    return it == map.end() ? nullptr : &it->second;
  };
  const auto at = [&](int32_t holder, int32_t chunk) -> Copy& {
    if (flat) return table[static_cast<size_t>((static_cast<int64_t>(holder) - lo) * chunks + chunk)];
    return map[copy_key(holder, chunk)];
  };
  const auto append = [](std::vector<TransferRef>& to, const std::vector<TransferRef>& from) {
    to.insert(to.end(), from.begin(), from.end());
  };
  std::vector<TransferRef> after;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    auto& transfers = plan.steps[s].transfers;
    for (Transfer& t : transfers) {
      after.clear();
      if (const Copy* c = find(t.src, t.chunk)) {  // read after write
        append(after, c->overwrite);
        append(after, c->reductions);
      }
      if (const Copy* c = find(t.dst, t.chunk)) {
        append(after, c->overwrite);                  // write after write
        append(after, c->reads);                      // write after read
        if (!t.reduce) append(after, c->reductions);  // an overwrite follows every reduction
      }
      std::sort(after.begin(), after.end());
      after.erase(std::unique(after.begin(), after.end()), after.end());
      t.after.assign(after.begin(), after.end());
    }
    const auto step = static_cast<int32_t>(s);
    for (size_t i = 0; i < transfers.size(); ++i)
      at(transfers[i].src, transfers[i].chunk).reads.push_back({step, static_cast<int32_t>(i)});
    for (size_t i = 0; i < transfers.size(); ++i) {
      Copy& c = at(transfers[i].dst, transfers[i].chunk);
      const TransferRef ref{step, static_cast<int32_t>(i)};
      if (transfers[i].reduce) {
        c.reductions.push_back(ref);
      } else {
        c.overwrite.assign(1, ref);
        c.reductions.clear();
        c.reads.clear();
      }
    }
  }
}

}  // namespace trainsim::models::collectives
