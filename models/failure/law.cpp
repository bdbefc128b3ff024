#include "models/failure/law.hpp"

#include <cmath>

namespace trainsim::models::failure {

double standard_exponential(sim::Rng& rng) {
  // 1 - U lies in (0, 1]: the logarithm is finite.
  return -std::log1p(-rng.uniform());
}

}  // namespace trainsim::models::failure
