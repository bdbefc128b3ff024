#include "models/workload/dag/build_context.hpp"

#include "models/llm/recompute_modules.hpp"

#include <string>

#include "models/llm/layer_kernels.hpp"
#include "models/workload/job/bf16_layers.hpp"

namespace trainsim::models::workload::dag {

using llm::Cost;
using sim::Bytes;
using sim::Time;

Labels::Labels(sim::task::TaskGraph& g)
    : embed_fwd(g.intern("embedding_fwd")),
      embed_bwd(g.intern("embedding_bwd")),
      head_fwd(g.intern("lm_head_loss_fwd")),
      head_dgrad(g.intern("lm_head_loss_dgrad")),
      head_wgrad(g.intern("lm_head_wgrad")),
      attn_pre(g.intern("attn_norm_fwd")),
      attn_fwd(g.intern("attn_fwd")),
      mlp_pre(g.intern("mlp_norm_fwd")),
      mlp_fwd(g.intern("mlp_fwd")),
      re_attn_pre(g.intern("recompute_attn_norm")),
      re_attn_fwd(g.intern("recompute_attn")),
      re_mlp_pre(g.intern("recompute_mlp_norm")),
      re_mlp_fwd(g.intern("recompute_mlp")),
      re_core(g.intern("recompute_attn_core")),
      attn_dgrad(g.intern("attn_dgrad")),
      attn_wgrad(g.intern("attn_wgrad")),
      attn_pre_bwd(g.intern("attn_norm_bwd")),
      mlp_dgrad(g.intern("mlp_dgrad")),
      mlp_wgrad(g.intern("mlp_wgrad")),
      mlp_pre_bwd(g.intern("mlp_norm_bwd")),
      tp_ar(g.intern("tp_all_reduce")),
      tp_ag(g.intern("tp_all_gather")),
      tp_rs(g.intern("tp_reduce_scatter")),
      tp_ag_grad(g.intern("tp_all_gather_grad")),
      tp_ag_input(g.intern("tp_all_gather_input")),
      tp_rs_grad(g.intern("tp_reduce_scatter_grad")),
      tp_ar_grad(g.intern("tp_all_reduce_grad")),
      send_fwd(g.intern("pp_send_activation")),
      send_bwd(g.intern("pp_send_gradient")),
      dp_grad(g.intern("dp_grad_reduce")),
      dp_grad_replica(g.intern("dp_grad_replica_all_reduce")),
      dp_param_ag(g.intern("dp_param_all_gather")),
      zero3_ag(g.intern("zero3_param_all_gather")),
      zero3_edge_ag(g.intern("zero3_embedding_all_gather")),
      zero3_rs(g.intern("zero3_grad_reduce_scatter")),
      zero3_ar(g.intern("zero3_grad_replica_all_reduce")),
      embed_sync(g.intern("embedding_grad_all_reduce")),
      optimizer(g.intern("optimizer_step")),
      cp_kv(g.intern("cp_ring_kv_send")),
      cp_kv_grad(g.intern("cp_ring_dkv_send")),
      cp_a2a_in(g.intern("cp_ulysses_all_to_all_qkv")),
      cp_a2a_out(g.intern("cp_ulysses_all_to_all_out")),
      cp_a2a_grad_out(g.intern("cp_ulysses_all_to_all_grad_out")),
      cp_a2a_grad_in(g.intern("cp_ulysses_all_to_all_grad_qkv")),
      offload_d2h(g.intern("offload_activations_d2h")),
      offload_h2d(g.intern("offload_activations_h2d")),
      grad_d2h(g.intern("offload_grads_d2h")),
      cpu_adam(g.intern("cpu_optimizer_step")),
      param_h2d(g.intern("offload_params_h2d")) {
  const char* fwd[2][3] = {{"attn_qkv_fwd", "attn_core_fwd", "attn_proj_fwd"},
                           {"mlp_fc1_fwd", "mlp_act_fwd", "mlp_fc2_fwd"}};
  const char* bwd[2][3] = {{"attn_proj_dgrad", "attn_core_bwd", "attn_qkv_dgrad"},
                           {"mlp_fc2_dgrad", "mlp_act_bwd", "mlp_fc1_dgrad"}};
  for (int b = 0; b < 2; ++b)
    for (int k = 0; k < 3; ++k) {
      parts_fwd[b][k] = g.intern(fwd[b][k]);
      parts_dgrad[b][k] = g.intern(bwd[b][k]);
    }
}

namespace {

Parts split_parts(const llm::Kernels& ks, const compute::ComputeModel& cm) {
  Parts p;
  if (ks.empty()) return p;
  // The head GEMM takes the QK-norm and rotary embedding that follow it.
  size_t head_end = 1;
  while (head_end + 1 < ks.size() && (ks[head_end].name.find(".rope.") != std::string::npos ||
                                      ks[head_end].name.find(".qk_norm.") != std::string::npos))
    ++head_end;
  const size_t tail_begin = ks.size() - 1;
  for (size_t i = 0; i < ks.size(); ++i) {
    const Cost c = llm::kernel_cost(ks[i], cm);
    (i < head_end ? p.head : i >= tail_begin ? p.tail : p.core) += c;
  }
  return p;
}

// A block's tasks from its kernels (`k`) and those of one TP-overlap chunk (`kc`, when `even`).
BlockTasks block_tasks(const llm::BlockCosts& whole, const llm::BlockKernels& k, const llm::BlockKernels& kc, bool even,
                       int64_t chunks, const compute::ComputeModel& cm) {
  BlockTasks t;
  t.whole = whole;
  t.fwd = split_parts(k.main_fwd, cm);
  t.dgrad = split_parts(k.main_dgrad, cm);
  t.fwd_chunk =
      even ? split_parts(kc.main_fwd, cm) : Parts{scaled(t.fwd.head, chunks), Cost{}, scaled(t.fwd.tail, chunks)};
  t.dgrad_chunk =
      even ? split_parts(kc.main_dgrad, cm) : Parts{scaled(t.dgrad.head, chunks), Cost{}, scaled(t.dgrad.tail, chunks)};
  return t;
}

// The attention and MLP blocks (and a sliding-window layer's attention, when the model has any)
// priced on `cm` (`lc`: the layer's costs on it), with the GEMMs of one TP-overlap chunk: the same
// layer on 1/n of the tokens (TE splits along M); the window spans the whole sequence, so a chunk
// of the tokens keeps it.
void price_blocks(const Job& j, const llm::LayerShape& shape, const compute::ComputeModel& cm,
                  const llm::LayerCosts& lc, int64_t chunks, BlockTasks (&blocks)[2], BlockTasks& local_attn) {
  const llm::LayerKernels lk = llm::layer_kernels(j.model, shape);
  llm::LayerShape chunk = shape;
  const bool even = shape.seq_len % chunks == 0;
  if (even) chunk.seq_len = shape.seq_len / chunks;
  const llm::LayerKernels ck = llm::layer_kernels(j.model, chunk);
  blocks[0] = block_tasks(lc.attn, lk.attn, ck.attn, even, chunks, cm);
  blocks[1] = block_tasks(lc.mlp, lk.mlp, ck.mlp, even, chunks, cm);
  if (!j.model.attention_window) return;
  llm::LayerShape ls = shape, lcs = chunk;
  ls.window = lcs.window = j.model.attention_window->size;
  const llm::LayerKernels lkl = llm::layer_kernels(j.model, ls), ckl = llm::layer_kernels(j.model, lcs);
  local_attn = block_tasks(llm::layer_costs(j.model, ls, cm).attn, lkl.attn, ckl.attn, even, chunks, cm);
}

}  // namespace

Cost scaled(const Cost& c, int64_t n) {
  return Cost{Time::ns(c.time.count_ns() / n), sim::Flops(c.flops.count() / static_cast<double>(n)), 1};
}

BuildContext::BuildContext(const Job& j, const compute::ComputeModel& c, const collectives::CommModel& cmm, Fidelity f,
                           sim::task::TaskGraph& graph)
    : job(j), cm(c), comm(cmm), fidelity(f), lb(graph), graphs(graphed_parts(j)) {
  seq_local = j.seq_len / j.cp;
  llm::LayerShape shape{
      j.micro_batch, seq_local, j.tp, j.sp, j.attention == Attention::kFlash, j.cp, j.stack.kernels.fp8_lm_head};
  shape.recompute_modules = j.recompute_modules;
  shape.eager_elementwise = j.stack.kernels.eager_elementwise && !j.torch_compile;
  shape.eager_loss = j.eager_loss();
  shape.eager_final_norm = j.stack.kernels.eager_elementwise;
  lc = llm::layer_costs(j.model, shape, cm);
  ec = llm::edge_costs(j.model, shape, cm);
  overlap_chunks = j.tp_comm_overlap && j.tp > 1 ? j.tp : 1;
  price_blocks(j, shape, cm, lc, overlap_chunks, blocks, local_attn);
  if (j.model.attention_window) {
    const int64_t total = j.model.layers + j.model.mtp_layers;
    local_layers.resize(static_cast<size_t>(total));
    for (int64_t l = 0; l < total; ++l) local_layers[static_cast<size_t>(l)] = j.model.is_local_layer(l) ? 1 : 0;
  }
  if (j.bf16_first_layers > 0 || j.bf16_last_layers > 0) {
    cm16.emplace(cm.gpu(), compute::Precision::kBf16);
    lc16 = llm::layer_costs(j.model, shape, *cm16);
    price_blocks(j, shape, *cm16, lc16, overlap_chunks, blocks16, local_attn16);
    const int64_t total = j.model.layers + j.model.mtp_layers;
    bf16_layers.resize(static_cast<size_t>(total));
    for (int64_t l = 0; l < total; ++l) bf16_layers[static_cast<size_t>(l)] = bf16_layer(j, l) ? 1 : 0;
  }
  p = j.pp;
  v = j.vp;
  m = j.microbatches;
  vstages = p * v;
  split_blocks = j.cp > 1 || overlap_chunks > 1;
  // Gradients are reduced in the stack's main-gradient dtype (Megatron's fp32 main grads under
  // bf16, accumulate_allreduce_grads_in_fp32; BF16 where the recipes set grad_reduce_in_fp32
  // False, as NeMo 24.07's and Megatron-Bridge's do) and in 16-bit under fp16.
  grad_elem = j.precision == compute::Precision::kFp16 ? 2 : j.stack.memory.main_grad_bytes;
  layer_params = j.model.moe ? j.model.layer_parameters() / static_cast<double>(j.tp) : j.rank_layer_params(0);
  reuses_gathered = schedules::ScheduleRegistry::instance().get(j.schedule, "schedule").reuses_gathered_weights;
  if (j.model.moe) moe = MoeBlock(j, shape, cm, comm, lc, graph);
  if (j.model.moe && cm16) moe16 = MoeBlock(j, shape, *cm16, comm, lc16, graph);
  if (j.recompute_modules & ~uint32_t{llm::kRecomputeCoreAttn}) lb.re_modules = graph.intern("recompute_modules");
  if (j.zero >= 3 && j.stack.kernels.fsdp_copy_out) lb.zero3_copy_out = graph.intern("fsdp_copy_out");
  if (j.model.mtp_layers > 0) {
    lb.mtp_fwd = graph.intern("mtp_embed_proj_fwd");
    lb.mtp_dgrad = graph.intern("mtp_embed_proj_dgrad");
    lb.mtp_wgrad = graph.intern("mtp_proj_wgrad");
  }
}

int64_t BuildContext::stage_of(int64_t vs) const {
  return schedules::stage_of(job.placement, static_cast<int>(p), static_cast<int>(vs));
}

double BuildContext::embedding_params() const {
  return static_cast<double>(job.model.vocab) * static_cast<double>(job.model.hidden) / static_cast<double>(job.tp);
}

Bytes BuildContext::param_bytes(double params, int layer) const {
  // A BF16 first/last layer's weights are 16-bit whatever the gather's precision.
  const bool quantized = job.fp8_param_gather && (layer < 0 || !bf16(layer));
  return Bytes::checked(params * (quantized ? 1.0 : 2.0), "parameter gather", "a smaller model");
}

Time BuildContext::transfer(int64_t bytes) const { return Bytes(bytes) / job.cluster.host_link_bandwidth; }

}  // namespace trainsim::models::workload::dag
