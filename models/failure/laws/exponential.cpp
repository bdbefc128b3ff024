// Exponential lifetimes: a constant hazard, so n components fail as a Poisson process of rate
// n x rate whatever their age, and replacing a failed one changes nothing.
#include "models/failure/law.hpp"

namespace trainsim::models::failure {
namespace {
FailureLawInfo exponential_law() {
  FailureLawInfo info;
  info.name = "exponential";
  info.description = "constant hazard: failures of n components form a Poisson process of rate n x rate";
  info.memoryless = true;
  info.next_in_cohort = [](sim::Rng& rng, double now, double n, const LawParams& p) {
    return now + standard_exponential(rng) / (n * p.rate);
  };
  info.lifetime = [](sim::Rng& rng, const LawParams& p) { return standard_exponential(rng) / p.rate; };
  return info;
}
}  // namespace
}  // namespace trainsim::models::failure

TRAINSIM_REGISTER_FAILURE_LAW(exponential, ::trainsim::models::failure::exponential_law())
