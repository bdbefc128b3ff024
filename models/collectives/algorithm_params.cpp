// The JSON field table of AlgorithmParams (the variants of an algorithm).
#include "models/collectives/collective.hpp"

namespace trainsim::models::collectives {

const sim::config::Schema<AlgorithmParams>& algorithm_params_schema() {
  static const auto schema = [] {
    sim::config::Schema<AlgorithmParams> s("collective algorithm parameters",
                                           "Variants of a collective algorithm (STYLE conv. 9).");
    s.custom("channels", "integer in [1, 64]", "1",
             "Independent copies of the algorithm, each on 1/channels of the buffer",
             [](AlgorithmParams& p, const sim::config::Json& j, const std::string& path) {
               p.channels = static_cast<int32_t>(sim::config::read_int(j, path, 1, 64));
             });
    s.boolean("bidirectional", &AlgorithmParams::bidirectional, false,
              "Ring and torus: double the channels and run every other one the opposite way");
    s.string("inter_node", &AlgorithmParams::inter_node, "ring",
             "hierarchical and nvls: the registered all-reduce run across servers");
    return s;
  }();
  return schema;
}

}  // namespace trainsim::models::collectives
