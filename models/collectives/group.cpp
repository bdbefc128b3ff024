// Group: the communicator's ranks and the servers they sit on.
#include "models/collectives/collective.hpp"

#include <map>

namespace trainsim::models::collectives {

Group Group::single_node(int32_t size, bool nvls) {
  Group g;
  g.size = size;
  g.nvls_capable = nvls;
  return g;
}

Group Group::blocked(int32_t nodes, int32_t per_node, bool nvls) {
  Group g;
  g.size = nodes * per_node;
  g.nvls_capable = nvls;
  for (int32_t r = 0; r < g.size; ++r) g.node_of_rank.push_back(r / per_node);
  return g;
}

int32_t Group::node(int32_t rank) const { return node_of_rank.empty() ? 0 : node_of_rank[static_cast<size_t>(rank)]; }

std::vector<std::vector<int32_t>> Group::ranks_by_node() const {
  std::map<int32_t, std::vector<int32_t>> by;
  for (int32_t r = 0; r < size; ++r) by[node(r)].push_back(r);
  std::vector<std::vector<int32_t>> out;
  for (auto& [node, ranks] : by) out.push_back(std::move(ranks));
  return out;
}

int32_t Group::node_count() const { return static_cast<int32_t>(ranks_by_node().size()); }

int32_t Group::ranks_per_node() const {
  const auto by = ranks_by_node();
  for (const auto& r : by)
    if (r.size() != by.front().size()) return 0;
  return by.empty() ? 0 : static_cast<int32_t>(by.front().size());
}

}  // namespace trainsim::models::collectives
