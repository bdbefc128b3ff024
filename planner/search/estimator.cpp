#include "planner/search/estimator.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "models/collectives/comm_model.hpp"
#include "models/llm/layer_kernels.hpp"
#include "models/llm/recompute_modules.hpp"
#include "models/memory/footprint.hpp"
#include "models/workload/dag/moe_block.hpp"
#include "models/workload/dag/stage_memory.hpp"
#include "models/workload/job/bf16_layers.hpp"
#include "models/workload/job/cuda_graphs.hpp"
#include "models/workload/job/expert_layout.hpp"
#include "models/workload/job/moe_options.hpp"
#include "planner/search/estimator_pass.hpp"
#include "planner/search/space.hpp"
#include "sim/checked.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::search {

using models::collectives::CollectiveOp;
using models::collectives::GroupPlacement;
using models::workload::Job;
using models::workload::JobSpec;

namespace {

int64_t clamp_per_node(int64_t gpn, int64_t stride, int64_t size) {
  if (stride >= gpn) return 1;
  return std::max<int64_t>(1, std::min(size, gpn / stride));
}

// `g` and `l` weighted (1 - f) and f: the closed form prices one mean layer, so a model with local
// (sliding-window) layers gets its attention block averaged over local and global layers.
models::llm::Cost blend(const models::llm::Cost& g, const models::llm::Cost& l, double f) {
  const double ns = (1.0 - f) * static_cast<double>(g.time.count_ns()) + f * static_cast<double>(l.time.count_ns());
  return models::llm::Cost{sim::checked_ns(std::round(ns)),
                           sim::Flops((1.0 - f) * g.flops.count() + f * l.flops.count()), g.kernels};
}

void blend_local_attention(const models::workload::Job& j, const models::llm::LayerShape& shape,
                           const models::compute::ComputeModel& cm, models::llm::BlockCosts& attn) {
  const auto& m = j.model;
  if (!m.attention_window) return;
  int64_t local = 0;
  for (int64_t i = 0; i < m.layers; ++i) local += m.is_local_layer(i) ? 1 : 0;
  const double f = static_cast<double>(local) / static_cast<double>(m.layers);
  models::llm::LayerShape ls = shape;
  ls.window = m.attention_window->size;
  const models::llm::BlockCosts l = models::llm::layer_costs(m, ls, cm).attn;
  attn.main_fwd = blend(attn.main_fwd, l.main_fwd, f);
  attn.main_dgrad = blend(attn.main_dgrad, l.main_dgrad, f);
  attn.selective_recompute = blend(attn.selective_recompute, l.selective_recompute, f);
}

}  // namespace

double usable_memory_bytes(const Job& hardware, double headroom) {
  return std::min(headroom * static_cast<double>(hardware.gpu.memory.count()),
                  static_cast<double>((hardware.gpu.memory - hardware.gpu.reserved_memory).count()));
}

Estimator::Estimator(const Job& hardware, const JobSpec& base, double headroom)
    : job_(hardware),
      spec_(base),
      cm_(hardware.gpu, hardware.precision),
      comm_(hardware.cluster),
      capacity_(usable_memory_bytes(hardware, headroom)) {}

Estimator::LayerTimes Estimator::price_layers(const models::compute::ComputeModel& cm) {
  const Job& j = job_;
  LayerTimes L;
  const auto& m = j.model;
  const int64_t gpn = j.cluster.domain_gpus();
  const int64_t seq_local = j.seq_len / j.cp;
  models::llm::LayerShape shape{j.micro_batch,
                                seq_local,
                                j.tp,
                                j.sp,
                                j.attention == models::workload::Attention::kFlash,
                                j.cp,
                                j.stack.kernels.fp8_lm_head};
  shape.recompute_modules = j.recompute_modules;
  shape.eager_elementwise = j.stack.kernels.eager_elementwise && !j.torch_compile;
  shape.eager_loss = j.eager_loss();
  shape.eager_final_norm = j.stack.kernels.eager_elementwise;
  models::llm::LayerCosts lc = models::llm::layer_costs(m, shape, cm);
  blend_local_attention(j, shape, cm, lc.attn);
  const models::llm::EdgeCosts ec = models::llm::edge_costs(m, shape, cm);
  // Kernels in CUDA graphs (cuda_graphs.hpp) cost the host nothing to issue (the region's one
  // launch is left out here): `graphed` says whether the part priced next is captured.
  const models::workload::GraphedParts graphs = models::workload::graphed_parts(j);
  bool graphed = graphs.iteration;
  auto t = [&](const models::llm::Cost& c) {
    return (graphed ? c.time : c.with_dispatch(j.kernel_dispatch)).seconds();
  };
  const GroupPlacement tpg{j.tp, std::min(j.tp, gpn)};
  auto tpc = [&](CollectiveOp op) { return j.tp > 1 ? comm_.collective(op, lc.tp_comm_bytes, tpg).seconds() : 0.0; };
  const double ag = tpc(CollectiveOp::kAllGather), rs = tpc(CollectiveOp::kReduceScatter),
               ar = tpc(CollectiveOp::kAllReduce);
  // TP overlap (--tp-comm-overlap): the GEMMs run in tp chunks of seq/tp tokens (priced as such
  // smaller GEMMs) and each chunk's collective overlaps the next chunk's GEMM.
  const int64_t chunks = j.tp_comm_overlap && j.tp > 1 && j.sp && seq_local % j.tp == 0 ? j.tp : 1;
  const double nc = static_cast<double>(chunks);
  models::llm::LayerKernels whole_k, chunk_k;
  if (chunks > 1) {
    whole_k = models::llm::layer_kernels(m, shape);
    models::llm::LayerShape cs = shape;
    cs.seq_len = seq_local / chunks;
    chunk_k = models::llm::layer_kernels(m, cs);
  }
  // Kernel time of a block part with its GEMMs chunked: non-GEMM kernels whole, GEMMs n times on
  // 1/n of the tokens. Returns (total, GEMM part).
  auto chunked = [&](const models::llm::Kernels& whole, const models::llm::Kernels& chunk) {
    double other = 0, gemm = 0;
    for (const auto& k : whole)
      if (k.kind != models::llm::KernelOp::Kind::kGemm) other += models::llm::kernel_cost(k, cm).time.seconds();
    for (const auto& k : chunk)
      if (k.kind == models::llm::KernelOp::Kind::kGemm) gemm += nc * models::llm::kernel_cost(k, cm).time.seconds();
    return std::make_pair(other + gemm, gemm);
  };
  // A collective split into n chunks of `chunk` seconds each (each pays its own launch and
  // latency), each hidden behind 1/n of `gemm` but the first / last.
  const sim::Bytes chunk_bytes(lc.tp_comm_bytes.count() / std::max<int64_t>(chunks, 1));
  auto chunk_of = [&](CollectiveOp op) { return j.tp > 1 ? comm_.collective(op, chunk_bytes, tpg).seconds() : 0.0; };
  const double ag_chunk = chunks > 1 ? chunk_of(CollectiveOp::kAllGather) : ag;
  const double rs_chunk = chunks > 1 ? chunk_of(CollectiveOp::kReduceScatter) : rs;
  auto overlapped = [&](double chunk, double gemm) {
    return chunk + std::max(0.0, chunk * (nc - 1.0) - gemm * (nc - 1.0) / nc);
  };
  const bool core = (j.recompute_modules & models::llm::kRecomputeCoreAttn) != 0;
  auto redo = [&](const models::llm::BlockCosts& c) {
    return (core ? t(c.selective_recompute) : 0.0) + t(c.module_recompute);
  };
  // A MoE model's attention is graphed as its layer's MLP allows (BuildContext::graphed): the
  // dense layers' as a dense model's, the MoE layers' by the MoE scopes. L.fwd & co. price the
  // dense layers' and the MoE MLP block carries the difference (`mix` blends by the MoE share).
  std::array<double, 3> attn_moe{};  // forward, input gradient, weight gradient
  if (m.moe && !graphs.iteration && graphs.moe_attention != graphs.attention) {
    const models::llm::BlockCosts& c = lc.attn;
    const auto attn = [&](bool g) {
      const auto part = [&](const models::llm::Cost& k) {
        return (g ? k.time : k.with_dispatch(j.kernel_dispatch)).seconds();
      };
      return std::array<double, 3>{
          part(c.pre_fwd) + part(c.main_fwd),
          part(c.main_dgrad) + part(c.pre_bwd) + (core ? part(c.selective_recompute) : 0.0) + part(c.module_recompute),
          part(c.main_wgrad)};
    };
    const auto moe_layers = attn(graphs.moe_attention), dense_layers = attn(graphs.attention);
    for (size_t i = 0; i < 3; ++i) attn_moe[i] = moe_layers[i] - dense_layers[i];
  }
  for (int b = 0; b < 2; ++b) {
    const models::llm::BlockCosts& c = b == 0 ? lc.attn : lc.mlp;
    graphed = graphs.iteration || (b == 0 ? graphs.attention : graphs.mlp);
    double fwd = t(c.pre_fwd) + t(c.main_fwd);
    double dgrad = t(c.main_dgrad) + t(c.pre_bwd) + redo(c);
    const double wgrad = t(c.main_wgrad);
    double fwd_comm = 0, exposed = 0, hidden = 0;
    if (j.tp > 1) {
      if (chunks > 1) {
        const auto& wb = b == 0 ? whole_k.attn : whole_k.mlp;
        const auto& cb = b == 0 ? chunk_k.attn : chunk_k.mlp;
        const auto [f_all, f_gemm] = chunked(wb.main_fwd, cb.main_fwd);
        const auto [d_all, d_gemm] = chunked(wb.main_dgrad, cb.main_dgrad);
        fwd = t(c.pre_fwd) + f_all;
        dgrad = d_all + t(c.pre_bwd) + redo(c);
        fwd_comm = overlapped(ag_chunk, f_gemm / 2.0) + overlapped(rs_chunk, f_gemm / 2.0);
        exposed = overlapped(ag_chunk, d_gemm / 2.0) + std::max(0.0, ag - d_all);
        hidden = overlapped(rs_chunk, d_gemm / 2.0);
      } else if (j.sp) {
        fwd_comm = ag + rs;
        // Gradient all-gather before the input-gradient GEMMs; the input all-gather for the weight
        // gradient runs beside them; the reduce-scatter beside the weight-gradient GEMMs.
        exposed = ag + std::max(0.0, ag - dgrad);
        hidden = rs;
      } else {
        fwd_comm = ar;
        hidden = ar;
      }
    }
    if (b == 1 && j.stack.kernels.recompute_early_stop) {
      // Full recompute stops before the MLP's last GEMM (layer_tasks.cpp): from it to the end of
      // the block's kernels, and the TP reduction after it.
      const models::llm::Kernels mf = models::llm::layer_kernels(m, shape).mlp.main_fwd;
      size_t last = mf.size();
      for (size_t i = 0; i < mf.size(); ++i)
        if (mf[i].kind == models::llm::KernelOp::Kind::kGemm) last = i;
      for (size_t i = last; i < mf.size(); ++i) L.early_stop += models::llm::kernel_cost(mf[i], cm).time.seconds();
      if (j.tp > 1) L.early_stop += j.sp ? rs : ar;
    }
    if (b == 1) {
      L.dense_mlp_fwd = fwd + fwd_comm;
      L.dense_mlp_dgrad = dgrad + exposed;
      L.dense_mlp_wgrad = wgrad;
    }
    L.fwd += fwd;
    L.fwd_comm += fwd_comm;
    L.dgrad += dgrad;
    L.wgrad += wgrad;
    L.bwd_comm_exposed += exposed;
    L.bwd_comm_hidden += hidden;
    L.tp += fwd_comm + exposed;
  }
  // Context parallelism around the attention core.
  if (j.cp > 1) {
    double core_f = 0, core_b = 0;
    for (const auto& k : models::llm::layer_kernels(m, shape).attn.main_fwd)
      if (k.kind == models::llm::KernelOp::Kind::kAttentionFwd)
        core_f += models::llm::kernel_cost(k, cm).time.seconds();
    for (const auto& k : models::llm::layer_kernels(m, shape).attn.main_dgrad)
      if (k.kind == models::llm::KernelOp::Kind::kAttentionBwd)
        core_b += models::llm::kernel_cost(k, cm).time.seconds();
    const int64_t u = j.cp_ulysses, ring = j.cp / u;
    double cp = 0;
    if (ring > 1) {
      const sim::Bytes kv(j.micro_batch * seq_local * m.kv_width() / j.tp * 2);
      const double hop = comm_.p2p(kv, j.tp * j.cp > gpn).seconds();
      const double rf = static_cast<double>(ring);
      cp += (rf - 1.0) * std::max(0.0, hop - core_f / rf);              // forward: K/V ahead of each step
      cp += (rf - 1.0) * std::max(0.0, 2.0 * hop - core_b / rf) + hop;  // backward: K/V and dK/dV
    }
    if (u > 1) {
      const GroupPlacement ug{u, clamp_per_node(gpn, j.tp, u)};
      const sim::Bytes qkv(j.micro_batch * seq_local * (m.hidden + m.kv_width()) / j.tp * 2);
      const sim::Bytes out(j.micro_batch * seq_local * m.hidden / j.tp * 2);
      cp += 2.0 * (comm_.collective(CollectiveOp::kAllToAll, qkv, ug).seconds() +
                   comm_.collective(CollectiveOp::kAllToAll, out, ug).seconds());
    }
    L.cp = cp;
  }
  // MoE layers: the MLP block is the routed block (dispatch / combine all-to-alls exposed; the
  // shared experts run beside them).
  if (m.moe) {
    const int64_t tokens = j.micro_batch * seq_local / (j.sp ? j.tp : 1);
    const models::llm::MoeBlockCosts mc =
        models::llm::moe_block_costs(m, shape, j.ep, j.etp, tokens, cm, models::workload::moe_run(j));
    const models::workload::ExpertLayout folding = models::workload::expert_layout(j);
    const GroupPlacement epg = folding.ep_group(), etg = folding.etp_group();
    auto coll = [&](CollectiveOp op, sim::Bytes b, const GroupPlacement& g) {
      return g.size > 1 ? comm_.collective(op, b, g).seconds() : 0.0;
    };
    // The dispatcher's collectives in one direction (moe_block.cpp): the forward's dispatch
    // carries the routing, so its bytes may differ from the backward's.
    auto one_way = [&](bool forward) {
      if (j.moe_dispatcher == models::llm::MoeDispatcher::kAllGather)
        return coll(CollectiveOp::kAllGather, forward ? mc.gather_ep_fwd : mc.gather_ep, epg) +
               coll(CollectiveOp::kAllGather, forward ? mc.gather_etp_fwd : mc.gather_etp, etg) +
               coll(CollectiveOp::kReduceScatter, mc.gather_etp, etg) +
               coll(CollectiveOp::kReduceScatter, mc.gather_ep, epg);
      return coll(CollectiveOp::kAllToAll, forward ? mc.a2a_dispatch : mc.a2a, epg) +
             coll(CollectiveOp::kAllToAll, mc.a2a, epg) + coll(CollectiveOp::kAllGather, mc.etp_rows, etg) +
             coll(CollectiveOp::kReduceScatter, mc.etp_rows, etg);
    };
    const double comm_f = one_way(true), comm_b = one_way(false);
    const double sync = models::workload::dag::moe_sync_stall(j, mc, lc, comm_).seconds();
    graphed = graphs.moe_router;
    const double router_f = t(mc.pre_fwd) + t(mc.router_fwd), router_b = t(mc.router_dgrad) + t(mc.pre_bwd);
    graphed = graphs.moe_rest;
    L.moe_fwd = router_f + t(mc.experts_fwd) + t(mc.post_fwd) + sync + std::max(comm_f, t(mc.shared_fwd)) +
                (j.sp && j.tp > 1 ? ag + rs : 0.0);
    L.moe_dgrad = t(mc.post_dgrad) + t(mc.experts_dgrad) + router_b + std::max(comm_b, t(mc.shared_dgrad)) +
                  (j.sp && j.tp > 1 ? 2.0 * ag : 0.0);
    // Selective recompute of the whole block redoes its forward (moe_block.cpp), else its parts.
    L.moe_dgrad += (j.recompute_modules & models::llm::kRecomputeMoe) ? L.moe_fwd : t(mc.recompute);
    L.moe_wgrad = t(mc.wgrad);
    L.moe_fwd += attn_moe[0];
    L.moe_dgrad += attn_moe[1];
    L.moe_wgrad += attn_moe[2];
    L.moe_comm = comm_f + comm_b;
    L.ep = comm_f + comm_b;
  }
  graphed = graphs.iteration;
  L.head_fwd = t(ec.head_fwd);
  L.head_bwd = t(ec.head_dgrad) + t(ec.head_wgrad);
  if (m.mtp_layers > 0) {
    // DeepSeek-V3's MTP modules run on the last stage with the LM head: per module its input
    // projection, one layer (its MLP block a MoE block when the last layer's is) and one more LM
    // head + loss.
    const bool moe_layer = m.moe && m.is_moe_layer(m.layers);
    const double attn_f = L.fwd + L.fwd_comm - L.dense_mlp_fwd;
    const double attn_b = L.dgrad + L.bwd_comm_exposed + L.wgrad - L.dense_mlp_dgrad - L.dense_mlp_wgrad;
    const double mlp_f = moe_layer ? L.moe_fwd : L.dense_mlp_fwd;
    const double mlp_b = moe_layer ? L.moe_dgrad + L.moe_wgrad : L.dense_mlp_dgrad + L.dense_mlp_wgrad;
    const double n = static_cast<double>(m.mtp_layers);
    const double head_f = L.head_fwd, head_b = L.head_bwd;
    L.head_fwd += n * (t(ec.mtp_fwd) + attn_f + mlp_f + head_f);
    L.head_bwd += n * (t(ec.mtp_dgrad) + t(ec.mtp_wgrad) + attn_b + mlp_b + head_b);
  }
  L.embed_fwd = t(ec.embed_fwd);
  L.embed_bwd = t(ec.embed_bwd);
  L.edge_head = L.head_fwd + L.head_bwd;
  L.edge_embed = L.embed_fwd + L.embed_bwd;
  return L;
}

// A layer's times on the job's precision; with BF16 first/last layers (bf16_layers.hpp) the
// per-layer figures blend the two precisions by the share of BF16 layers in the model (exact with
// one stage; with pp > 1 those layers sit on the first and last stages, which the blend spreads
// over all: the simulator's rerank prices them where they are). The LM head and embedding are
// the job's whatever the share.
const Estimator::LayerTimes& Estimator::layer_times() {
  const Job& j = job_;
  const auto key = std::make_tuple(j.tp, j.cp, j.micro_batch, j.sp, j.ep, j.etp, j.recompute_modules,
                                   static_cast<int>(j.moe_dispatcher));
  if (const auto it = layers_.find(key); it != layers_.end()) return it->second;
  LayerTimes L = price_layers(cm_);
  if (const double w = models::workload::bf16_layer_share(j); w > 0.0) {
    const models::compute::ComputeModel cm16(j.gpu, models::compute::Precision::kBf16);
    const LayerTimes B = price_layers(cm16);
    for (double LayerTimes::*f :
         {&LayerTimes::fwd, &LayerTimes::fwd_comm, &LayerTimes::dgrad, &LayerTimes::wgrad, &LayerTimes::bwd_comm_hidden,
          &LayerTimes::bwd_comm_exposed, &LayerTimes::tp, &LayerTimes::cp, &LayerTimes::ep, &LayerTimes::moe_fwd,
          &LayerTimes::moe_dgrad, &LayerTimes::moe_wgrad, &LayerTimes::moe_comm, &LayerTimes::dense_mlp_fwd,
          &LayerTimes::dense_mlp_dgrad, &LayerTimes::dense_mlp_wgrad, &LayerTimes::early_stop})
      L.*f = (1.0 - w) * L.*f + w * B.*f;
  }
  return layers_.emplace(key, L).first->second;
}

double Estimator::memory() {
  const Job& j = job_;
  const int p = static_cast<int>(j.pp), v = static_cast<int>(j.vp), m = static_cast<int>(j.microbatches);
  const PipelineShape& sh = pipes_.shape(schedule_, p, m, v);
  const int64_t V = j.pp * j.vp;
  const int64_t first = models::workload::embedding_stage(j), last = models::workload::head_stage(j);
  double peak = -1;
  auto consider = [&](int64_t s, double act) {
    models::memory::StageMemory sm = models::memory::stage_memory(models::workload::stage_memory_input(j, s));
    sm.activations = sim::Bytes(static_cast<int64_t>(act));
    const double total = static_cast<double>(sm.total().count());
    if (total > peak) {
      peak = total;
      return_stage_ = static_cast<int32_t>(s);
    }
  };
  // MoE models with dense first layers or MoE every other layer: stages differ in weights and
  // chunks in activations; every stage is checked with its own op order (the simulator's count).
  const bool uniform = !j.model.moe || (j.model.moe->first_dense_layers == 0 && j.model.moe->layer_freq == 1);
  if (!uniform) {
    for (int64_t s = 0; s < j.pp; ++s)
      consider(s,
               static_cast<double>(models::workload::activation_peak(j, s, sh.orders[static_cast<size_t>(s)]).bytes));
    return peak;
  }
  // Otherwise only the first and last virtual stages differ (embedding output, lighter uneven
  // ends), and the stages holding neither are alike but for how many chunks they keep alive.
  const double a_first = static_cast<double>(models::workload::chunk_activation_bytes(j, 0));
  const double a_last = V > 1 ? static_cast<double>(models::workload::chunk_activation_bytes(j, V - 1)) : 0.0;
  const double a_mid = V > 2 ? static_cast<double>(models::workload::chunk_activation_bytes(j, V / 2)) : 0.0;
  for (const int64_t s : {first, last, static_cast<int64_t>(sh.busiest_middle_stage)}) {
    if (s < 0) continue;
    double act = 0;
    for (const auto& pt : sh.activation_points[static_cast<size_t>(s)])
      act = std::max(act, pt[0] * a_mid + pt[1] * a_first + pt[2] * a_last);
    if (j.offload_activations) {
      // The chunk being computed and the one prefetched: twice this stage's largest chunk.
      const int64_t ends = (s == first ? 1 : 0) + (s == last && V > 1 ? 1 : 0);
      const double largest = std::max({s == first ? a_first : 0.0, s == last ? a_last : 0.0, v > ends ? a_mid : 0.0});
      act = std::min(act, 2.0 * largest);
    }
    consider(s, act);
  }
  return peak;
}

Verdict Estimator::estimate(const Candidate& c, Estimate& out, std::string* why) {
  apply(c, job_, spec_);
  try {
    models::workload::resolve_parallel(spec_, job_);
  } catch (const ConfigError& e) {
    if (why) *why = e.path();
    return Verdict::kInvalid;
  }
  out = Estimate{};
  schedule_ = c.schedule;
  out.peak_memory_bytes = memory();
  out.worst_memory_stage = return_stage_;
  if (out.peak_memory_bytes > capacity_) return Verdict::kDoesNotFit;
  if (job_.cluster.host_memory.count() > 0 &&
      (job_.offload_optimizer || job_.offload_activations || job_.offload_activation_layers > 0)) {
    // The offloads must fit the host too (the simulator's check, exact: the same stage orders).
    const PipelineShape& sh = pipes_.shape(schedule_, static_cast<int>(job_.pp), static_cast<int>(job_.microbatches),
                                           static_cast<int>(job_.vp));
    for (int64_t st = 0; st < job_.pp; ++st)
      out.host_memory_bytes = std::max(out.host_memory_bytes, static_cast<double>(models::workload::host_offload_bytes(
                                                                  job_, st, sh.orders[static_cast<size_t>(st)])));
    if (!job_.cluster.holds_on_host(sim::Bytes(static_cast<int64_t>(out.host_memory_bytes))))
      return Verdict::kDoesNotFit;
  }

  const auto& sched = models::schedules::ScheduleRegistry::instance().all()[c.schedule];
  Pass s{job_,
         layer_times(),
         sched,
         c.schedule,
         job_.cluster.domain_gpus(),
         static_cast<double>(job_.microbatches),
         sched.splits_weight_grad};
  layer_ops(s);
  zero3_ops(s);
  stage_ops(s);
  pipeline(s);
  grad_reduction(s);
  optimizer_step(s);
  breakdown(s, out);
  return Verdict::kOk;
}

// One layer's F, B and W on the critical rank (the MoE share of layers replaces the dense MLP).
void Estimator::layer_ops(Pass& s) {
  const auto& m = s.j.model;
  const LayerTimes& L = s.L;
  s.moe_share = m.moe ? static_cast<double>(m.moe_layers()) / static_cast<double>(m.layers) : 0.0;
  s.f_layer = s.mix(L.fwd + L.fwd_comm + L.cp / 2.0, L.dense_mlp_fwd, L.moe_fwd);
  s.f_recompute = s.f_layer - (1.0 - s.moe_share) * L.early_stop;
  s.dgrad = s.mix(L.dgrad + L.bwd_comm_exposed + L.cp / 2.0, L.dense_mlp_dgrad, L.moe_dgrad);
  s.wgrad = s.mix(L.wgrad, L.dense_mlp_wgrad, L.moe_wgrad);
  if (s.split) {
    s.b_layer = s.dgrad + L.bwd_comm_hidden;
    s.w_layer = s.wgrad;
  } else {
    s.b_layer = s.dgrad + std::max(s.wgrad, L.bwd_comm_hidden);
  }
}

// ZeRO-3: each layer's weights are gathered (prefetched behind the previous layer) and its
// gradients reduce-scattered, per micro-batch (once per chunk pass when the schedule reuses them).
void Estimator::zero3_ops(Pass& s) {
  const Job& j = s.j;
  const int64_t gpn = s.gpn;
  const double layer_params = j.rank_layer_params(j.layers.size() > 1 ? 1 : 0);
  s.grad_elem = j.precision == models::compute::Precision::kFp16 ? 2 : j.stack.memory.main_grad_bytes;
  s.shard = GroupPlacement{j.dp_shard, clamp_per_node(gpn, j.tp, j.dp_shard)};
  s.grad_group = GroupPlacement{j.dp_cp(), clamp_per_node(gpn, j.tp, j.dp_cp())};
  s.replica = GroupPlacement{j.dp_cp() / j.dp_shard, clamp_per_node(gpn, j.tp * j.dp_shard, j.dp_cp() / j.dp_shard)};
  if (j.zero >= 3 && j.stack.kernels.fsdp_copy_out) {
    // FSDP2 copies each gathered layer out on the compute stream, before its forward and, gathered
    // again under reshard_after_forward, its backward (sharding.cpp). Full recompute reuses the
    // backward's gather.
    const double copy =
        models::llm::fsdp_copy_out_cost(layer_params * models::workload::gathered_param_bytes(j), cm_).time.seconds() *
        (s.sched.reuses_gathered_weights ? 1.0 / s.mbs : 1.0);
    s.copy_f = copy;
    s.copy_b = j.reshard_after_forward ? copy : 0.0;
    const double edge = static_cast<double>(j.model.vocab * j.model.hidden) / static_cast<double>(j.tp);
    s.copy_edge = models::llm::fsdp_copy_out_cost(edge * 2.0, cm_).time.seconds();  // 16-bit (sharding.cpp)
  }
  if (j.zero >= 3 && j.dp_shard > 1) {
    // MoE layers: the routed experts over the expert data-parallel group, the rest over the shard
    // group (sharding.cpp).
    const int64_t probe = j.layers.size() > 1 ? 1 : 0;
    const double experts = j.model.moe ? j.expert_layer_params(probe) : 0.0;
    const double dense = layer_params - experts;
    const double elem = models::workload::gathered_param_bytes(j);
    const GroupPlacement edp{j.expert_dp(), clamp_per_node(gpn, j.ep * j.etp, j.expert_dp())};
    const bool expert_group = experts > 0.0 && j.expert_dp() > 1;
    double g =
        comm_.collective(CollectiveOp::kAllGather, sim::Bytes(static_cast<int64_t>(dense * elem)), s.shard).seconds();
    const sim::Bytes gb(static_cast<int64_t>(dense * s.grad_elem));
    double r = comm_.collective(CollectiveOp::kReduceScatter, gb, s.shard).seconds();
    if (expert_group) {
      g += comm_.collective(CollectiveOp::kAllGather, sim::Bytes(static_cast<int64_t>(experts * elem)), edp).seconds();
      r += comm_.collective(CollectiveOp::kReduceScatter, sim::Bytes(static_cast<int64_t>(experts * s.grad_elem)), edp)
               .seconds();
    }
    if (j.dp_shard < j.dp_cp()) r += comm_.collective(CollectiveOp::kAllReduce, gb / j.dp_shard, s.replica).seconds();
    const double amortize = s.sched.reuses_gathered_weights ? 1.0 / s.mbs : 1.0;
    // The backward of a layer (with its recomputed forward under full recompute) hides the next
    // layer's gather and this layer's reduce-scatter, which share the data-parallel stream.
    const double recompute_share =
        j.recompute == models::workload::Recompute::kFull
            ? static_cast<double>(j.recompute_layers) / static_cast<double>(std::max<int64_t>(1, j.layers[0]))
            : 0.0;
    const double ef = std::max(0.0, g - s.f_layer) * amortize;
    const double eb = std::max(0.0, g * amortize + r - (s.b_layer + s.w_layer + recompute_share * s.f_layer));
    s.zero3 = ef + eb;
  }
}

// Chunk op times: the largest chunk sets the pace; full recompute redoes the forward.
// Op times of the slowest stage, spread over its v chunks: the stage holding the embedding and
// the one holding the LM head and loss (lighter by a layer or two in uneven layouts), and a
// middle one holding only layers. Then the stage boundary transfer.
void Estimator::stage_ops(Pass& s) {
  const Job& j = s.j;
  const LayerTimes& L = s.L;
  const double f_layer_z = s.f_layer + s.copy_f + (s.zero3 > 0 ? s.zero3 * 0.5 : 0.0);
  const double b_layer_z = s.b_layer + s.copy_b + (s.zero3 > 0 ? s.zero3 * 0.5 : 0.0);
  double f = 0, b = 0, w = 0;
  const int64_t first_stage = models::workload::embedding_stage(j), last_stage = models::workload::head_stage(j);
  const int64_t middle = j.pp > 2 ? 1 + (first_stage == 1 || last_stage == 1 ? 1 : 0) : first_stage;
  const double vv = static_cast<double>(j.vp);
  for (const int64_t st : {first_stage, last_stage, std::min(middle, j.pp - 1)}) {
    double fv = 0, bv = 0, wv = 0;
    for (int64_t ch = 0; ch < j.vp; ++ch) {
      const int64_t nl = j.layers[static_cast<size_t>(j.virtual_stage(st, ch))];
      const double recomputed = j.recompute == models::workload::Recompute::kFull
                                    ? static_cast<double>(std::min(j.recompute_layers, nl))
                                    : 0.0;
      fv += static_cast<double>(nl) * f_layer_z;
      bv += static_cast<double>(nl) * b_layer_z + recomputed * s.f_recompute;
      wv += static_cast<double>(nl) * s.w_layer;
    }
    // The embedding is gathered before its forward, the LM head before its forward and backward.
    if (st == first_stage) {
      fv += L.embed_fwd + s.copy_edge;
      bv += L.embed_bwd;
    }
    if (st == last_stage) {
      fv += L.head_fwd + s.copy_edge;
      bv += L.head_bwd + s.copy_edge;
    }
    f = std::max(f, fv / vv);
    b = std::max(b, bv / vv);
    w = std::max(w, wv / vv);
  }
  const double n = static_cast<double>(*std::max_element(j.layers.begin(), j.layers.end()));
  s.recomputed = j.recompute == models::workload::Recompute::kFull
                     ? static_cast<double>(std::min<int64_t>(j.recompute_layers, static_cast<int64_t>(n)))
                     : 0.0;

  // Stage boundary transfers (split over TP ranks and re-gathered when scatter_gather).
  const int64_t seq_local = j.seq_len / j.cp;
  const sim::Bytes act_bytes(j.micro_batch * seq_local * j.model.hidden * 2);
  const bool scatter = j.scatter_gather && j.tp > 1;
  double hop = 0;
  if (j.pp > 1) {
    const sim::Bytes wire = scatter ? act_bytes / j.tp : act_bytes;
    hop = comm_.p2p(wire, j.tp * j.cp * j.dp >= s.gpn).seconds();
    if (scatter)
      hop +=
          comm_.collective(CollectiveOp::kAllGather, act_bytes, GroupPlacement{j.tp, std::min(j.tp, s.gpn)}).seconds();
  }
  if (!j.overlap_p2p) {
    f += hop;
    b += hop;
  }
  s.f = f;
  s.b = b;
  s.w = w;
  s.n = n;
  s.hop = hop;
  s.first_stage = first_stage;
  s.last_stage = last_stage;
}

// The pipeline's makespan under the candidate's schedule, and the busy time inside it.
void Estimator::pipeline(Pass& s) {
  const Job& j = s.j;
  const LayerTimes& L = s.L;
  const int p = static_cast<int>(j.pp), mi = static_cast<int>(j.microbatches);
  s.v = static_cast<int>(j.vp);
  s.edge = j.pp == 1 ? L.edge_head + L.edge_embed : std::max(L.edge_head, L.edge_embed);
  s.timing = pipes_.timing(s.schedule, p, mi, s.v, s.f, s.b, s.w);
  s.fill = j.overlap_p2p && j.pp > 1 ? 2.0 * (j.pp - 1) * s.hop : 0.0;
  s.pipe = s.timing.makespan + s.fill;
  s.busy = s.mbs * static_cast<double>(s.v) * (s.f + s.b + s.w);
}

// The iteration time and its breakdown by kind.
void Estimator::breakdown(const Pass& s, Estimate& out) {
  const LayerTimes& L = s.L;
  out.iteration_s = s.pipe + s.dp_exposed + s.opt;
  const double per_layer_ops = s.mbs * static_cast<double>(s.v) * s.n;
  out.compute_s = per_layer_ops * (s.mix(L.fwd, L.dense_mlp_fwd, L.moe_fwd) + s.wgrad +
                                   s.mix(L.dgrad, L.dense_mlp_dgrad, L.moe_dgrad) + s.copy_f + s.copy_b) +
                  s.mbs * static_cast<double>(s.v) * s.recomputed * s.f_recompute + s.mbs * s.edge;
  out.tp_s = per_layer_ops * (L.tp);
  out.cp_s = per_layer_ops * L.cp;
  out.ep_s = per_layer_ops * s.moe_share * L.ep;
  out.zero3_s = per_layer_ops * s.zero3;
  out.bubble_s = std::max(0.0, s.pipe - s.busy);
  out.dp_s = s.dp_exposed;
  out.optimizer_s = s.opt;
}

}  // namespace trainsim::planner::search
