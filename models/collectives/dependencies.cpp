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
  std::unordered_map<int64_t, Copy> copies;  // looked up only, never iterated
  const auto append = [](std::vector<TransferRef>& to, const std::vector<TransferRef>& from) {
    to.insert(to.end(), from.begin(), from.end());
  };
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    auto& transfers = plan.steps[s].transfers;
    for (Transfer& t : transfers) {
      std::vector<TransferRef> after;
      if (auto it = copies.find(copy_key(t.src, t.chunk)); it != copies.end()) {  // read after write
        append(after, it->second.overwrite);
        append(after, it->second.reductions);
      }
      if (auto it = copies.find(copy_key(t.dst, t.chunk)); it != copies.end()) {
        append(after, it->second.overwrite);                  // write after write
        append(after, it->second.reads);                      // write after read
        if (!t.reduce) append(after, it->second.reductions);  // an overwrite follows every reduction
      }
      std::sort(after.begin(), after.end());
      after.erase(std::unique(after.begin(), after.end()), after.end());
      t.after = std::move(after);
    }
    const auto step = static_cast<int32_t>(s);
    for (size_t i = 0; i < transfers.size(); ++i)
      copies[copy_key(transfers[i].src, transfers[i].chunk)].reads.push_back({step, static_cast<int32_t>(i)});
    for (size_t i = 0; i < transfers.size(); ++i) {
      Copy& c = copies[copy_key(transfers[i].dst, transfers[i].chunk)];
      const TransferRef ref{step, static_cast<int32_t>(i)};
      if (transfers[i].reduce) {
        c.reductions.push_back(ref);
      } else {
        c = Copy{{ref}, {}, {}};
      }
    }
  }
}

}  // namespace trainsim::models::collectives
