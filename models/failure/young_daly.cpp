#include "models/failure/young_daly.hpp"

#include <cmath>

namespace trainsim::models::failure {

sim::Time young_interval(sim::Time delta, sim::Time mtbf) {
  return sim::Time::from_seconds_ceil(std::sqrt(2.0 * delta.seconds() * mtbf.seconds()));
}

sim::Time daly_interval(sim::Time delta, sim::Time mtbf) {
  const double d = delta.seconds(), m = mtbf.seconds();
  if (d >= 2.0 * m) return mtbf;
  const double x = d / (2.0 * m);
  return sim::Time::from_seconds_ceil(std::sqrt(2.0 * d * m) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - d);
}

sim::Time daly_expected_time(sim::Time work, sim::Time interval, sim::Time delta, sim::Time restart, sim::Time mtbf) {
  const double m = mtbf.seconds();
  return sim::Time::from_seconds_ceil(m * std::exp(restart.seconds() / m) *
                                      std::expm1((interval.seconds() + delta.seconds()) / m) * work.seconds() /
                                      interval.seconds());
}

}  // namespace trainsim::models::failure
