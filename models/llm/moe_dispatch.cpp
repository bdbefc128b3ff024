#include "models/llm/moe_dispatch.hpp"

#include <algorithm>
#include <cmath>

#include "sim/error.hpp"

namespace trainsim::models::llm {

namespace {

// Excess of the hottest expert's share over the mean, E * p_0 - 1, under Zipf skew s (its share
// capped at 1/top_k, as route_tokens caps it).
double max_violation(double s, int64_t experts, int64_t top_k) {
  double norm = 0.0;
  for (int64_t i = 0; i < experts; ++i) norm += std::pow(static_cast<double>(i + 1), -s);
  const double p0 = std::min(1.0 / norm, 1.0 / static_cast<double>(top_k));
  return static_cast<double>(experts) * p0 - 1.0;
}

// C(E - S, k) / C(E, k): the chance that none of a token's k distinct experts is among S given ones.
double miss_all(int64_t experts, int64_t subset, int64_t top_k) {
  double p = 1.0;
  for (int64_t i = 0; i < top_k; ++i)
    p *= std::max(0.0, static_cast<double>(experts - subset - i)) / static_cast<double>(experts - i);
  return p;
}

}  // namespace

double aux_free_skew(double skew, int64_t experts, int64_t top_k) {
  TRAINSIM_ASSERT(skew >= 0.0 && experts >= 1 && top_k >= 1, "aux_free_skew: skew ", skew);
  if (skew <= 0.0 || experts == 1) return 0.0;
  const double target = kAuxFreeMaxVioRatio * max_violation(skew, experts, top_k);
  double lo = 0.0, hi = skew;  // max_violation is non-decreasing in s
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (max_violation(mid, experts, top_k) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double routing_skew(const MoeSpec& moe, MoeBalance balance) {
  return balance == MoeBalance::kAuxFree ? aux_free_skew(moe.router_skew, moe.experts, moe.top_k) : moe.router_skew;
}

double flex_dedup_factor(int64_t experts, int64_t top_k, int64_t ep, int64_t ep_per_node) {
  TRAINSIM_ASSERT(experts >= 1 && top_k >= 1 && ep >= 1 && ep_per_node >= 1, "flex_dedup_factor: ep ", ep);
  if (ep == 1) return 1.0;
  const int64_t g = std::min(ep, ep_per_node);
  const int64_t nodes = (ep + g - 1) / g;
  const double k = static_cast<double>(top_k);
  if (nodes > 1) {
    const double copies = static_cast<double>(nodes - 1) * (1.0 - miss_all(experts, experts / nodes, top_k));
    const double rows = k * static_cast<double>(ep - g) / static_cast<double>(ep);
    return std::min(1.0, copies / rows);
  }
  const double copies = static_cast<double>(ep - 1) * (1.0 - miss_all(experts, experts / ep, top_k));
  const double rows = k * static_cast<double>(ep - 1) / static_cast<double>(ep);
  return std::min(1.0, copies / rows);
}

}  // namespace trainsim::models::llm
