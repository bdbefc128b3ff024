#include "models/workload/job/cuda_graphs.hpp"

#include "models/workload/job/job.hpp"
#include "models/workload/job/moe_options.hpp"
#include "sim/error.hpp"

namespace trainsim::models::workload {

const std::vector<std::string>& cuda_graph_scope_names() {
  static const std::vector<std::string> names{"full",       "attn",           "mlp",           "moe",
                                              "moe_router", "moe_preprocess", "full_iteration"};
  return names;
}

uint32_t parse_cuda_graph_scope(const sim::config::Json& v, const std::string& path) {
  return sim::config::read_name_set(v, path, cuda_graph_scope_names(), "scope", "[\"attn\", \"moe_router\"]");
}

std::string cuda_graph_scope_string(uint32_t scope) {
  return sim::config::name_set_string(scope, cuda_graph_scope_names());
}

GraphedParts graphed_parts(const Job& j) {
  const uint32_t s = j.cuda_graphs;
  GraphedParts p;
  if (s & kGraphFullIteration) {
    p.attention = p.moe_attention = p.mlp = p.moe_router = p.moe_rest = p.iteration = true;
    return p;
  }
  // A MoE layer with dynamic shapes is not captured whole (`full`) nor its MoE part (`moe`).
  const bool whole_moe = !moe_dispatch_syncs(j);
  p.attention = (s & (kGraphFull | kGraphAttn)) != 0;
  p.moe_attention = (s & kGraphAttn) != 0 || ((s & kGraphFull) != 0 && whole_moe);
  p.mlp = (s & (kGraphFull | kGraphMlp)) != 0;
  p.moe_router =
      (s & (kGraphMoeRouter | kGraphMoePreprocess)) != 0 || ((s & (kGraphFull | kGraphMoe)) != 0 && whole_moe);
  p.moe_rest = (s & (kGraphFull | kGraphMoe)) != 0 && whole_moe;
  return p;
}

void check_cuda_graphs(const Job& j) {
  const uint32_t s = j.cuda_graphs;
  if (s == 0) return;
  if ((s & kGraphFullIteration) && s != kGraphFullIteration)
    throw ConfigError("cuda_graph_scope",
                      "full_iteration captures the whole iteration and cannot be combined with " +
                          cuda_graph_scope_string(s & ~kGraphFullIteration),
                      "keep full_iteration alone, or drop it");
  if ((s & kGraphFullIteration) && moe_dispatch_syncs(j))
    throw ConfigError("cuda_graph_scope",
                      "full_iteration cannot capture the dropless MoE dispatcher, which copies the tokens per expert "
                      "to the host every layer",
                      "use attn,moe_router,moe_preprocess, as Megatron-Bridge's MoE recipes do");
  if ((s & (kGraphMoe | kGraphMoeRouter | kGraphMoePreprocess)) && !j.model.moe)
    throw ConfigError("cuda_graph_scope",
                      "names MoE scopes (" +
                          cuda_graph_scope_string(s & (kGraphMoe | kGraphMoeRouter | kGraphMoePreprocess)) +
                          ") but model \"" + j.model.name + "\" has no MoE layers",
                      "use full, attn or mlp");
  if (j.offload_activations || j.offload_activation_layers > 0)
    throw ConfigError("cuda_graph_scope",
                      "cannot be combined with activation offload (Megatron-Core: \"CUDA graphs "
                      "not supported with CPU offloading\")",
                      "drop --cuda-graph-scope or the activation offload");
  if (j.recompute == Recompute::kFull)
    throw ConfigError("cuda_graph_scope",
                      "cannot be combined with full recompute (Megatron-Core: \"CUDA graphs not supported with "
                      "activation recomputation\")",
                      "use --recompute selective or none, or drop --cuda-graph-scope");
}

}  // namespace trainsim::models::workload
