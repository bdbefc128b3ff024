// Weibull lifetimes, F(t) = 1 - exp(-(t/eta)^k), with eta set so that the mean lifetime is
// 1 / rate: eta = 1 / (rate x Gamma(1 + 1/k)). k < 1 is infant mortality (a new cluster fails most
// early on), k > 1 wear-out.
//
// Cohort: n components of the same age a + t at run time t. Given none failed since `now`, the
// first of them fails after s with survival exp(-n ((a+s)^k - (a+now)^k) / eta^k), so by
// inversion s = eta ((( a+now)/eta)^k + E/n)^(1/k) - a with E ~ Exp(1): exact, O(1) per failure.
#include <cmath>

#include "models/failure/law.hpp"

namespace trainsim::models::failure {
namespace {
double eta(const LawParams& p) { return 1.0 / (p.rate * std::tgamma(1.0 + 1.0 / p.shape)); }

FailureLawInfo weibull_law() {
  FailureLawInfo info;
  info.name = "weibull";
  info.description = "Weibull hazard with shape k (k < 1 infant mortality, k > 1 wear-out); mean life 1 / rate";
  info.memoryless = false;
  info.next_in_cohort = [](sim::Rng& rng, double now, double n, const LawParams& p) {
    const double e = eta(p), k = p.shape;
    const double h0 = std::pow((p.age + now) / e, k);
    return e * std::pow(h0 + standard_exponential(rng) / n, 1.0 / k) - p.age;
  };
  info.lifetime = [](sim::Rng& rng, const LawParams& p) {
    return eta(p) * std::pow(standard_exponential(rng), 1.0 / p.shape);
  };
  return info;
}
}  // namespace
}  // namespace trainsim::models::failure

TRAINSIM_REGISTER_FAILURE_LAW(weibull, ::trainsim::models::failure::weibull_law())
