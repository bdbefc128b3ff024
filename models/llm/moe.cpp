#include "models/llm/moe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "models/llm/layer_ops.hpp"
#include "sim/error.hpp"

namespace trainsim::models::llm {

namespace {
using compute::GemmShape;
using Kind = KernelOp::Kind;

// Bytes per element of bf16/fp16 activations; the router's logits and probabilities are fp32.
constexpr double kAct = 2;
constexpr double kFp32 = 4;

// Whole rows of an expected row count, rounded up (an expert that expects 12.3 rows runs 13), with
// a little slack so that a count that is whole but for rounding error stays whole.
int64_t whole_rows(double rows) { return static_cast<int64_t>(std::ceil(rows - 1e-9 * std::max(1.0, rows))); }

}  // namespace

double Routing::imbalance() const {
  const double balanced = static_cast<double>(tokens) * static_cast<double>(top_k);
  return balanced > 0.0 ? received_tokens / balanced : 1.0;
}

Routing route_tokens(int64_t experts, int64_t top_k, int64_t ep, int64_t tokens, double router_skew,
                     std::optional<double> capacity_factor, int64_t hidden, int64_t bytes_per_element,
                     bool pad_to_capacity) {
  TRAINSIM_ASSERT(experts >= 1 && top_k >= 1 && top_k <= experts && ep >= 1 && tokens >= 0 && router_skew >= 0.0,
                  "route_tokens: experts ", experts, ", top_k ", top_k, ", ep ", ep, ", tokens ", tokens);
  if (experts % ep != 0)
    throw ConfigError("ep", "ep (" + std::to_string(ep) + ") must divide the experts (" + std::to_string(experts) + ")",
                      "every EP rank holds experts/ep whole experts: use a divisor of the expert count");
  const int64_t E = experts;
  Routing r;
  r.experts = E;
  r.top_k = top_k;
  r.ep = ep;
  r.tokens = tokens;

  // 1. Zipf weights by popularity rank, then shares capped at 1/top_k by water-filling: the c hottest
  // experts take 1/top_k each, the others share 1 - c/top_k in proportion to their weights.
  std::vector<double> w(static_cast<size_t>(E)), suffix(static_cast<size_t>(E) + 1, 0.0);
  for (int64_t i = 0; i < E; ++i) w[static_cast<size_t>(i)] = std::pow(static_cast<double>(i + 1), -router_skew);
  for (int64_t i = E - 1; i >= 0; --i)
    suffix[static_cast<size_t>(i)] = suffix[static_cast<size_t>(i + 1)] + w[static_cast<size_t>(i)];
  const double k = static_cast<double>(top_k);
  int64_t capped = 0;
  while (capped < E) {
    const double rest = 1.0 - static_cast<double>(capped) / k;
    if (rest * w[static_cast<size_t>(capped)] <= suffix[static_cast<size_t>(capped)] / k * (1.0 + 1e-12)) break;
    ++capped;
  }
  // 2. Expected assignments from one rank, kept up to the capacity.
  const double assigned = static_cast<double>(tokens) * k;  // T * top_k
  const double capacity = capacity_factor ? std::ceil(*capacity_factor * assigned / static_cast<double>(E))
                                          : std::numeric_limits<double>::infinity();
  r.expert_tokens.resize(static_cast<size_t>(E));
  double dropped = 0.0;
  const double rest = 1.0 - static_cast<double>(capped) / k;
  for (int64_t i = 0; i < E; ++i) {
    const size_t u = static_cast<size_t>(i);
    const double a =
        i < capped ? static_cast<double>(tokens) : assigned * rest * w[u] / suffix[static_cast<size_t>(capped)];
    const double kept = std::min(a, capacity);
    // Padded to capacity, every expert's rows are sent and computed, padding included.
    const double rows = pad_to_capacity && capacity_factor ? capacity : kept;
    r.sent_tokens += rows;
    dropped += a - kept;
    r.expert_tokens[u] = static_cast<double>(ep) * rows;
  }
  // 3. Round-robin placement of the popularity ranks: rank q holds q, q + ep, q + 2 ep, ...
  r.rank_tokens.assign(static_cast<size_t>(ep), 0.0);
  for (int64_t i = 0; i < E; ++i) r.rank_tokens[static_cast<size_t>(i % ep)] += r.expert_tokens[static_cast<size_t>(i)];
  for (int64_t j = 0; j < E / ep; ++j) r.local_tokens.push_back(r.expert_tokens[static_cast<size_t>(j * ep)]);
  r.received_tokens = r.rank_tokens[0];
  r.self_tokens = r.received_tokens / static_cast<double>(ep);
  r.dropped_fraction = assigned > 0.0 ? dropped / assigned : 0.0;
  r.bytes_per_token = sim::Bytes(hidden * bytes_per_element);
  const double row = static_cast<double>(r.bytes_per_token.count());
  r.dispatch_send = sim::Bytes(whole_rows(r.sent_tokens * row));
  r.dispatch_recv = sim::Bytes(whole_rows(r.received_tokens * row));
  return r;
}

Routing route_tokens(const ModelSpec& m, int64_t ep, int64_t tokens, int64_t bytes_per_element) {
  TRAINSIM_ASSERT(m.moe.has_value(), "route_tokens: model ", m.name, " has no MoE layers");
  const MoeSpec& e = *m.moe;
  return route_tokens(e.experts, e.top_k, ep, tokens, e.router_skew, e.capacity_factor, m.hidden, bytes_per_element,
                      e.pad_to_capacity);
}

Routing route_tokens(const ModelSpec& m, int64_t ep, int64_t tokens, MoeBalance balance) {
  TRAINSIM_ASSERT(m.moe.has_value(), "route_tokens: model ", m.name, " has no MoE layers");
  const MoeSpec& e = *m.moe;
  return route_tokens(e.experts, e.top_k, ep, tokens, routing_skew(e, balance), e.capacity_factor, m.hidden, 2,
                      e.pad_to_capacity);
}

MoeBlockKernels moe_block_kernels(const ModelSpec& m, const LayerShape& s, int64_t ep, int64_t etp,
                                  const Routing& routing, const MoeRun& run) {
  TRAINSIM_ASSERT(m.moe.has_value(), "moe_block_kernels: model ", m.name, " has no MoE layers");
  const MoeSpec& e = *m.moe;
  TRAINSIM_ASSERT(routing.experts == e.experts && routing.top_k == e.top_k && routing.ep == ep,
                  "moe_block_kernels: the routing was computed for another model or ep");
  TRAINSIM_ASSERT(etp >= 1 && e.expert_ffn_hidden % etp == 0, "moe_block_kernels: etp ", etp,
                  " must divide expert_ffn_hidden ", e.expert_ffn_hidden);
  const int64_t h = m.hidden, E = e.experts, T = routing.tokens;
  const int64_t gates = m.activation == "swiglu" ? 2 : 1;
  const int64_t fl = e.expert_ffn_hidden / etp;  // local width of one expert
  const double hd = static_cast<double>(h), Td = static_cast<double>(T), Ed = static_cast<double>(E);
  const double kd = static_cast<double>(e.top_k);
  // Rows this rank gathers for dispatch and gets back from the combine (after drops).
  const double rows_out = routing.sent_tokens;

  MoeBlockKernels out;
  const LayerKernels dense = layer_kernels(m, s);
  out.pre_fwd = dense.mlp.pre_fwd;
  out.pre_bwd = dense.mlp.pre_bwd;

  // Router: logits [T, E] (a GEMM), softmax over fp32 logits (read + write), top-k selection (read
  // the probabilities, write k fp32 weights and k int64 indices); permute gathers the kept rows.
  out.router_fwd = {forward_gemm("moe.router", T, E, h),
                    memory_kernel("moe.topk.fwd", Td * Ed * kFp32 * 3 + Td * kd * (kFp32 + 8)),
                    memory_kernel("moe.permute.fwd", rows_out * hd * 2 * kAct)};
  // Balancing: the auxiliary loss reads the [T, E] routing map (1 byte) and fp32 probabilities and
  // reduces them per expert (two reductions and the loss itself); expert-bias balancing counts
  // the routing map per expert.
  if (run.balance == MoeBalance::kAuxLoss) {
    out.router_fwd.push_back(memory_kernel("moe.aux_loss.fwd", Td * Ed * (1 + kFp32)));
    out.router_fwd.push_back(memory_kernel("moe.aux_loss.reduce", Ed * kFp32 * 2));
  } else {
    out.router_fwd.push_back(memory_kernel("moe.expert_bias.count", Td * Ed));
  }

  // Routed experts: a grouped GEMM is one GEMM per local expert with its own row count.
  std::vector<int64_t> rows;
  int64_t total_rows = 0;
  for (double t : routing.local_tokens) {
    rows.push_back(whole_rows(t));
    total_rows += rows.back();
  }
  const auto name = [](size_t j, const char* what) { return "moe.expert" + std::to_string(j) + "." + what; };
  const double act = static_cast<double>(total_rows) * static_cast<double>(fl) * kAct;
  Kernels clamp_fwd, clamp_bwd;
  if (m.activation_clamp)
    append_glu_clamp(clamp_fwd, clamp_bwd, "moe.experts", static_cast<double>(total_rows) * static_cast<double>(fl));
  for (size_t j = 0; j < rows.size(); ++j)
    if (rows[j] > 0) out.experts_fwd.push_back(forward_gemm(name(j, "fc1"), rows[j], gates * fl, h));
  out.experts_fwd.insert(out.experts_fwd.end(), clamp_fwd.begin(), clamp_fwd.end());
  out.experts_fwd.push_back(memory_kernel("moe.experts.act.fwd", act * static_cast<double>(gates + 1)));
  for (size_t j = 0; j < rows.size(); ++j)
    if (rows[j] > 0) out.experts_fwd.push_back(forward_gemm(name(j, "fc2"), rows[j], h, fl));
  for (size_t j = 0; j < rows.size(); ++j)
    if (rows[j] > 0) out.experts_dgrad.push_back(dgrad_gemm(name(j, "fc2"), rows[j], h, fl));
  out.experts_dgrad.push_back(memory_kernel("moe.experts.act.bwd", act * static_cast<double>(1 + 2 * gates)));
  out.experts_dgrad.insert(out.experts_dgrad.end(), clamp_bwd.begin(), clamp_bwd.end());
  for (size_t j = 0; j < rows.size(); ++j)
    if (rows[j] > 0) out.experts_dgrad.push_back(dgrad_gemm(name(j, "fc1"), rows[j], gates * fl, h));
  for (size_t j = 0; j < rows.size(); ++j)
    if (rows[j] > 0) {
      out.experts_wgrad.push_back(wgrad_gemm(name(j, "fc2"), rows[j], h, fl));
      out.experts_wgrad.push_back(wgrad_gemm(name(j, "fc1"), rows[j], gates * fl, h));
    }

  // The all-to-all dispatcher receives rows grouped by source rank; with several local experts it
  // sorts them by expert before the GEMMs and back by rank before the combine (Megatron-Core
  // token_dispatcher.py dispatch_postprocess / combine_preprocess: sort_chunks_by_idxs, or the
  // transpose().contiguous() of drop-and-pad), the rows and their fp32 probabilities read and
  // written once each; the backward runs both in reverse.
  if (run.dispatcher == MoeDispatcher::kAllToAll && ep > 1 && E / ep > 1) {
    const double sort = static_cast<double>(total_rows) * (hd * kAct + kFp32) * 2;
    out.experts_fwd.insert(out.experts_fwd.begin(), memory_kernel("moe.sort_chunks.fwd", sort));
    out.experts_fwd.push_back(memory_kernel("moe.unsort_chunks.fwd", sort));
    out.experts_dgrad.insert(out.experts_dgrad.begin(), memory_kernel("moe.unsort_chunks.bwd", sort));
    out.experts_dgrad.push_back(memory_kernel("moe.sort_chunks.bwd", sort));
  }

  // Shared experts: one dense MLP of width shared_experts * expert_ffn_hidden / etp on all T tokens.
  if (e.shared_experts > 0) {
    const int64_t sl = e.shared_experts * fl;
    const double sact = Td * static_cast<double>(sl) * kAct;
    Kernels sclamp_fwd, sclamp_bwd;
    if (m.activation_clamp) append_glu_clamp(sclamp_fwd, sclamp_bwd, "moe.shared", Td * static_cast<double>(sl));
    out.shared_fwd = {forward_gemm("moe.shared.fc1", T, gates * sl, h)};
    out.shared_fwd.insert(out.shared_fwd.end(), sclamp_fwd.begin(), sclamp_fwd.end());
    out.shared_fwd.push_back(memory_kernel("moe.shared.act.fwd", sact * static_cast<double>(gates + 1)));
    out.shared_fwd.push_back(forward_gemm("moe.shared.fc2", T, h, sl));
    out.shared_dgrad = {dgrad_gemm("moe.shared.fc2", T, h, sl),
                        memory_kernel("moe.shared.act.bwd", sact * static_cast<double>(1 + 2 * gates))};
    out.shared_dgrad.insert(out.shared_dgrad.end(), sclamp_bwd.begin(), sclamp_bwd.end());
    out.shared_dgrad.push_back(dgrad_gemm("moe.shared.fc1", T, gates * sl, h));
    out.shared_wgrad = {wgrad_gemm("moe.shared.fc2", T, h, sl), wgrad_gemm("moe.shared.fc1", T, gates * sl, h)};
  }
  const double shared_rows = e.shared_experts > 0 ? Td : 0.0;

  // Combine: read the returned rows, weight and sum them into T rows (+ the shared output).
  out.post_fwd = {memory_kernel("moe.unpermute.fwd", (rows_out + Td + shared_rows) * hd * kAct)};
  // Backward: read the output gradient and the saved expert outputs (for the gate weights'
  // gradient), write one gradient row per returned row.
  out.post_dgrad = {memory_kernel("moe.unpermute.bwd", (Td + 2 * rows_out) * hd * kAct)};
  // Router backward: sum the top_k gradient copies of each token (+ the shared path's gradient),
  // softmax/top-k backward over fp32 [T, E] (read gradient and probabilities, write), router dgrad.
  out.router_dgrad = {memory_kernel("moe.permute.bwd", (rows_out + Td + shared_rows) * hd * kAct),
                      memory_kernel("moe.topk.bwd", Td * Ed * kFp32 * 3), dgrad_gemm("moe.router", T, E, h)};
  out.router_wgrad = {wgrad_gemm("moe.router", T, E, h)};
  // The auxiliary loss's gradient, added into the probabilities' gradient (read, read, write).
  if (run.balance == MoeBalance::kAuxLoss)
    out.router_dgrad.insert(out.router_dgrad.begin() + 1, memory_kernel("moe.aux_loss.bwd", Td * Ed * kFp32 * 3));
  // All-gather dispatcher: the expert outputs are scattered into a zeroed buffer of every gathered
  // token (written whole, then reduce-scattered); backward, the permute's gradient likewise.
  if (run.dispatcher == MoeDispatcher::kAllGather) {
    const double gathered = Td * static_cast<double>(ep * etp) * hd * kAct;
    out.post_fwd.insert(out.post_fwd.begin(), memory_kernel("moe.allgather.unpermute_buffer.fwd", gathered));
    out.router_dgrad.insert(out.router_dgrad.begin(), memory_kernel("moe.allgather.permute_buffer.bwd", gathered));
  }

  out.a2a_bytes = ep > 1 ? std::max(routing.dispatch_send, routing.dispatch_recv) : sim::Bytes(0);
  return out;
}

double moe_forward_model_flops_per_sequence(const ModelSpec& m, int64_t seq_len) {
  const double dense = forward_model_flops_per_sequence(m, seq_len);
  if (!m.moe) return dense;
  // Each MoE layer swaps the dense MLP's 2 (gates + 1) h f per token for its active experts' and
  // the router's.
  const MoeSpec& e = *m.moe;
  const double h = static_cast<double>(m.hidden), gates = m.activation == "swiglu" ? 2.0 : 1.0;
  const double dense_mlp = 2.0 * (gates + 1.0) * h * static_cast<double>(m.ffn_hidden);
  const double moe_mlp = 2.0 * ((gates + 1.0) * h * static_cast<double>(e.expert_ffn_hidden) *
                                    static_cast<double>(e.top_k + e.shared_experts) +
                                h * static_cast<double>(e.experts));
  // MTP layers shaped like a MoE layer count as MoE layers too.
  const int64_t moe_layers = m.moe_layers() + (m.mtp_layers > 0 && m.is_moe_layer(m.layers) ? m.mtp_layers : 0);
  return dense + static_cast<double>(seq_len) * static_cast<double>(moe_layers) * (moe_mlp - dense_mlp);
}

}  // namespace trainsim::models::llm
