#pragma once
// What a Job fixes for the whole build, computed once: the task labels, the layer and edge costs
// (each block also split at its GEMMs and, under TP overlap, per chunk), the pipeline sizes and
// the MoE block. Const while the phases of build_workload run.

#include <cstdint>
#include <optional>
#include <vector>

#include "models/collectives/comm_model.hpp"
#include "models/compute/compute_model.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/workload/dag/moe_block.hpp"
#include "models/workload/dag/workload.hpp"
#include "models/workload/job/cuda_graphs.hpp"
#include "models/workload/job/job.hpp"
#include "sim/task/task_graph.hpp"

namespace trainsim::models::workload::dag {

// Labels of the builder's tasks, interned once in this order.
struct Labels {
  sim::task::LabelId embed_fwd, embed_bwd, head_fwd, head_dgrad, head_wgrad;
  sim::task::LabelId attn_pre, attn_fwd, mlp_pre, mlp_fwd;
  sim::task::LabelId re_attn_pre, re_attn_fwd, re_mlp_pre, re_mlp_fwd, re_core;
  sim::task::LabelId attn_dgrad, attn_wgrad, attn_pre_bwd, mlp_dgrad, mlp_wgrad, mlp_pre_bwd;
  sim::task::LabelId tp_ar, tp_ag, tp_rs, tp_ag_grad, tp_ag_input, tp_rs_grad, tp_ar_grad;
  sim::task::LabelId send_fwd, send_bwd, dp_grad, dp_grad_replica, dp_param_ag, zero3_ag, zero3_edge_ag, zero3_rs,
      zero3_ar, embed_sync, optimizer;
  // Blocks split at their GEMMs (context parallelism, TP overlap): head GEMM, core, tail GEMM.
  sim::task::LabelId parts_fwd[2][3], parts_dgrad[2][3];
  sim::task::LabelId cp_kv, cp_kv_grad, cp_a2a_in, cp_a2a_out, cp_a2a_grad_out, cp_a2a_grad_in;
  sim::task::LabelId offload_d2h, offload_h2d, grad_d2h, cpu_adam, param_h2d;
  // Interned only for a model with MTP modules (BuildContext), so other graphs are unchanged.
  sim::task::LabelId mtp_fwd{}, mtp_dgrad{}, mtp_wgrad{};
  // Interned only when selective recompute redoes more than the attention core.
  sim::task::LabelId re_modules{};
  // Interned only under ZeRO-3 on a stack that copies gathered parameters out (FSDP2).
  sim::task::LabelId zero3_copy_out{};
  explicit Labels(sim::task::TaskGraph& g);
};

// A block's main kernels split at its GEMMs: the first GEMM (plus the rotary embedding that
// follows it), the core between (attention, activation), the last GEMM.
struct Parts {
  llm::Cost head, core, tail;
};

// `c` spread evenly over `n` tasks (one kernel each).
llm::Cost scaled(const llm::Cost& c, int64_t n);

// Costs of one block of a layer, as tasks.
struct BlockTasks {
  llm::BlockCosts whole;
  Parts fwd, dgrad;              // main_fwd / main_dgrad split at the GEMMs
  Parts fwd_chunk, dgrad_chunk;  // one of tp chunks of the GEMMs (tp_comm_overlap)
};

struct BuildContext {
  // Interns the labels into `graph` (the graph the build fills).
  BuildContext(const Job& job, const compute::ComputeModel& cm, const collectives::CommModel& comm, Fidelity fidelity,
               sim::task::TaskGraph& graph);

  const Job& job;
  const compute::ComputeModel& cm;
  const collectives::CommModel& comm;
  Fidelity fidelity;
  Labels lb;
  llm::LayerCosts lc;
  BlockTasks blocks[2];            // attention (of a global layer), MLP
  BlockTasks local_attn;           // attention of a local (sliding-window) layer, when the model has any
  std::vector<char> local_layers;  // per layer (MTP layers included): attends through the window
  llm::EdgeCosts ec;
  int64_t p = 1, v = 1, m = 1, vstages = 1;
  int64_t seq_local = 0;      // tokens of a sequence on one CP rank
  int64_t grad_elem = 4;      // bytes per gradient element in data-parallel reduction
  double layer_params = 0;    // parameters of one layer on one TP rank
  bool split_blocks = false;  // blocks run as head / core / tail tasks
  int64_t overlap_chunks = 1;
  bool reuses_gathered = false;  // breadth-first: consecutive ops of a chunk keep its gathered weights
  MoeBlock moe;                  // MoE layers' MLP block (every MoE layer has the same shape)
  GraphedParts graphs;           // what CUDA graphs capture (job/cuda_graphs.hpp)
  // BF16 first/last layers of a quantized job (job/bf16_layers.hpp): their blocks priced in BF16.
  std::optional<compute::ComputeModel> cm16;
  llm::LayerCosts lc16;
  BlockTasks blocks16[2], local_attn16;
  MoeBlock moe16;
  std::vector<char> bf16_layers;  // per layer (MTP layers included): runs in BF16

  int64_t stage_of(int64_t vs) const;
  // The costs of block `blk` (0 attention, 1 MLP) of layer `layer`: local and global layers differ
  // in their attention core only, and each kind is priced once.
  const BlockTasks& block(int blk, int layer) const {
    const bool local = blk == 0 && !local_layers.empty() && local_layers[static_cast<size_t>(layer)];
    if (bf16(layer)) return local ? local_attn16 : blocks16[blk];
    return local ? local_attn : blocks[blk];
  }
  bool bf16(int layer) const { return !bf16_layers.empty() && bf16_layers[static_cast<size_t>(layer)]; }
  // The MoE block of layer `layer` (BF16 or the job's precision).
  const MoeBlock& moe_of(int layer) const { return bf16(layer) ? moe16 : moe; }
  bool moe_layer(int layer) const { return job.model.moe && job.model.is_moe_layer(layer); }
  // Whether block `blk` (0 attention, 1 dense MLP) of layer `layer` runs in a CUDA graph (a MoE
  // layer's MoE block graphs its own parts).
  bool graphed(int blk, int layer) const {
    if (blk == 0) return moe_layer(layer) ? graphs.moe_attention : graphs.attention;
    return graphs.mlp && !moe_layer(layer);
  }
  // Parameters of layer `layer` one rank holds: dense ones split over TP, routed experts over
  // EP x expert-TP.
  double rank_params(int layer) const {
    return job.model.moe || layer >= job.model.layers ? job.rank_layer_params(layer) : layer_params;
  }
  double expert_params(int layer) const { return job.expert_layer_params(layer); }
  // The embedding (or LM head) parameters on one TP rank.
  double embedding_params() const;
  // Bytes of `params` parameters (of layer `layer`, or -1) as gathered (bf16, or fp8 with
  // fp8_param_gather unless the layer runs in BF16).
  sim::Bytes param_bytes(double params, int layer = -1) const;
  // Time of a host <-> device copy of `bytes` over the GPU's host link.
  sim::Time transfer(int64_t bytes) const;
};

}  // namespace trainsim::models::workload::dag
