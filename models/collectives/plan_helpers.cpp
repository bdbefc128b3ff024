// Building blocks for algorithm generators: chunk layout, adding transfers, ring passes, splicing
// steps.
#include "models/collectives/collective.hpp"
#include "sim/error.hpp"

namespace trainsim::models::collectives {

namespace detail {

std::vector<sim::Bytes> split_bytes(sim::Bytes total, int32_t parts) {
  TRAINSIM_ASSERT(parts >= 1, "split into ", parts, " parts");
  std::vector<sim::Bytes> out(static_cast<size_t>(parts), total / parts);
  const int64_t rest = total.count() % parts;
  for (int64_t i = 0; i < rest; ++i) out[static_cast<size_t>(i)] += sim::Bytes(1);
  return out;
}

void set_chunks(CollectivePlan& plan, sim::Bytes total, int32_t parts) {
  plan.chunks = parts;
  plan.chunk_bytes = split_bytes(total, parts);
}

void add(CollectivePlan& plan, size_t step, int32_t src, int32_t dst, int32_t chunk, bool reduce) {
  if (plan.steps.size() <= step) plan.steps.resize(step + 1);
  plan.steps[step].transfers.push_back(
      Transfer{src, dst, chunk, plan.chunk_bytes.at(static_cast<size_t>(chunk)), reduce});
}

void ring_pass(CollectivePlan& plan, size_t first_step, const std::vector<int32_t>& members,
               const std::vector<std::vector<int32_t>>& blocks, bool reduce, bool reversed) {
  const auto d = static_cast<int32_t>(members.size());
  TRAINSIM_ASSERT(blocks.size() == members.size(), "ring_pass: one block per member");
  const auto at = [d](int32_t i) { return static_cast<size_t>(((i % d) + d) % d); };
  // Forward: position a sends to a + 1. Reduce-scatter: block (a - k - 1) in step k, so block b
  // leaves b + 1 first and ends, summed, at b after d - 1 steps. All-gather: block (a - k).
  // Reversed mirrors both.
  for (int32_t k = 0; k + 1 < d; ++k)
    for (int32_t a = 0; a < d; ++a) {
      const int32_t to = reversed ? a - 1 : a + 1;
      const int32_t block = reduce ? (reversed ? a + k + 1 : a - k - 1) : (reversed ? a + k : a - k);
      for (int32_t chunk : blocks[at(block)])
        add(plan, first_step + static_cast<size_t>(k), members[at(a)], members[at(to)], chunk, reduce);
    }
}

void append_steps(CollectivePlan& plan, size_t first_step, const std::vector<Step>& steps) {
  if (plan.steps.size() < first_step + steps.size()) plan.steps.resize(first_step + steps.size());
  for (size_t s = 0; s < steps.size(); ++s)
    for (const Transfer& t : steps[s].transfers) plan.steps[first_step + s].transfers.push_back(t);
}

}  // namespace detail

}  // namespace trainsim::models::collectives
