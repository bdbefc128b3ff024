// Bytes sent and received per rank of a plan.
#include "models/collectives/collective.hpp"

namespace trainsim::models::collectives {

std::vector<sim::Bytes> bytes_sent_per_rank(const CollectivePlan& plan) {
  std::vector<sim::Bytes> out(static_cast<size_t>(plan.ranks));
  for (const Step& s : plan.steps)
    for (const Transfer& t : s.transfers)
      if (!is_switch(t.src)) out[static_cast<size_t>(t.src)] += t.bytes;
  return out;
}

std::vector<sim::Bytes> bytes_received_per_rank(const CollectivePlan& plan) {
  std::vector<sim::Bytes> out(static_cast<size_t>(plan.ranks));
  for (const Step& s : plan.steps)
    for (const Transfer& t : s.transfers)
      if (!is_switch(t.dst)) out[static_cast<size_t>(t.dst)] += t.bytes;
  return out;
}

}  // namespace trainsim::models::collectives
