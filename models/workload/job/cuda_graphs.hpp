#pragma once
// CUDA graphs, as Megatron-Core captures them (TransformerConfig cuda_graph_impl /
// cuda_graph_scope; Megatron-Bridge's performance recipes set them per GPU, 25.09 as
// `cuda_graphs: true`, 25.11 as a scope list). A captured region is replayed with one graph
// launch: its kernels cost the host nothing to issue, so a region of short kernels is no longer
// bound by the host's per-kernel dispatch (the job's kernel_dispatch, Grace 2.75x).
//
//   full             each transformer layer whole (TE make_graphed_callables, or the local
//                    layer-wise graphs of 25.09's enable_cuda_graph)
//   attn             the attention part of each layer (input norm, QKV, attention, projection)
//   mlp              a dense layer's MLP part (pre-MLP norm, MLP)
//   moe              a MoE layer's MoE part (router, dispatch, experts, combine)
//   moe_router       a MoE layer's pre-MLP norm and router
//   moe_preprocess   the dispatcher's preprocessing after the router (routing-map metadata)
//   full_iteration   the forward and backward of every micro-batch as one graph (cuda_graph_impl
//                    local); the optimizer step stays eager
//
// What a graph cannot capture stays eager: a dropless MoE dispatcher copies the tokens per expert
// to the host before its all-to-all (llm/host_sync.hpp), so its shapes are dynamic and "the
// resulting dynamic shapes make MoE layers uncapturable" (Megatron-Core 0.14 moe/README.md, CUDA
// Graph Support): under `full` or `moe` such a layer runs eager, attention included (`attn` and
// `moe_router` graph its static parts), and `full_iteration` is refused for such a job.
//
// Memory adds nothing: the tensors a captured layer keeps are the activations the eager run keeps
// (Transformer Engine 2.7+ reuses the graphs' static input and output buffers between graphs,
// `_reuse_graph_input_output_buffers` in Megatron-Core 0.15 transformer/cuda_graphs.py), and the
// graphs' private pool is reserved as the caching allocator's is (the stack's
// allocator_fragmentation).

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/schema.hpp"

namespace trainsim::models::workload {

struct Job;

enum CudaGraphScope : uint32_t {
  kGraphFull = 1u << 0,
  kGraphAttn = 1u << 1,
  kGraphMlp = 1u << 2,
  kGraphMoe = 1u << 3,
  kGraphMoeRouter = 1u << 4,
  kGraphMoePreprocess = 1u << 5,
  kGraphFullIteration = 1u << 6,
};

// The names in Megatron's spelling, bit i for names[i].
const std::vector<std::string>& cuda_graph_scope_names();
uint32_t parse_cuda_graph_scope(const sim::config::Json& v, const std::string& path);
std::string cuda_graph_scope_string(uint32_t scope);

// What a job's graphs cover, with what cannot be captured taken out.
struct GraphedParts {
  bool attention = false;      // a dense layer's attention block
  bool moe_attention = false;  // a MoE layer's attention block
  bool mlp = false;            // a dense layer's MLP block
  bool moe_router = false;     // a MoE layer's pre-MLP norm, router and preprocessing
  bool moe_rest = false;       // a MoE layer's dispatch, experts and combine (no host sync between)
  bool iteration = false;      // every micro-batch's forward and backward (not the optimizer)
};
GraphedParts graphed_parts(const Job& j);

// The job's scope against what it runs with; throws ConfigError naming cuda_graph_scope.
void check_cuda_graphs(const Job& j);

}  // namespace trainsim::models::workload
