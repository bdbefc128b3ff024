#pragma once
// Failure laws: how long components of one kind live. A law is parameterised by its long-run
// failure rate per component-hour (1 / MTTF, so laws with the same rate fail equally often over a
// long run) and, where it has one, a shape. Each law registers from its own file (laws/*.cpp).
//
// The Monte Carlo (monte_carlo.hpp) asks two things of a law: the next failure among a cohort of
// n identical components that entered service together (`age` hours before the run started),
// and the lifetime of one new component (a replacement).

#include <functional>
#include <string>

#include "sim/registry.hpp"
#include "sim/rng.hpp"

namespace trainsim::models::failure {

struct LawParams {
  double rate = 0;   // failures per component-hour over a long run (1 / mean time to failure)
  double shape = 1;  // Weibull shape k (< 1 infant mortality, 1 exponential, > 1 wear-out)
  double age = 0;    // hours each component of the cohort had been in service when the run started
};

struct FailureLawInfo {
  static constexpr const char* kWhat = "failure law";
  std::string name;
  std::string description;
  bool memoryless = false;  // the hazard does not depend on age (replacements change nothing)
  // Hours (run clock) of the next failure among `n` cohort components still alive at `now`,
  // given no failure among them since `now`; `n` > 0.
  std::function<double(sim::Rng&, double now, double n, const LawParams&)> next_in_cohort;
  // Lifetime in hours of one new component.
  std::function<double(sim::Rng&, const LawParams&)> lifetime;
};

using FailureLawRegistry = sim::Registry<FailureLawInfo>;

// Exp(1) variate (never infinite).
double standard_exponential(sim::Rng& rng);

}  // namespace trainsim::models::failure

#define TRAINSIM_REGISTER_FAILURE_LAW(id, info)                                                               \
  namespace {                                                                                                 \
  const ::trainsim::models::failure::FailureLawRegistry::Registrar trainsim_failure_law_registrar_##id{info}; \
  }
