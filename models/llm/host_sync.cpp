#include "models/llm/host_sync.hpp"

#include <algorithm>

namespace trainsim::models::llm {

sim::Time host_sync_stall(const std::vector<IssueStep>& steps, sim::Time per_kernel, sim::Time latency) {
  sim::Time host = latency, gpu_end = sim::Time::zero(), idle = sim::Time::zero();
  for (const IssueStep& s : steps) {
    host += per_kernel * s.host_ops;
    if (host > gpu_end) {
      idle += host - gpu_end;
      gpu_end = host;
    }
    gpu_end += s.gpu;
  }
  return idle;
}

namespace {

// A group of kernels issued one by one: k steps of equal device time.
void add_kernels(std::vector<IssueStep>& out, const Cost& c) {
  if (c.kernels <= 0) return;
  const sim::Time each = sim::Time::ns(c.time.count_ns() / c.kernels);
  for (int i = 0; i < c.kernels; ++i) out.push_back(IssueStep{1, each});
}

// Kernels captured in one CUDA graph: one launch.
void add_graph(std::vector<IssueStep>& out, const Cost& a, const Cost& b) {
  if (a.kernels + b.kernels > 0) out.push_back(IssueStep{1, a.time + b.time});
}

}  // namespace

std::vector<IssueStep> moe_sync_steps(const MoeBlockCosts& moe, const LayerCosts& next, sim::Time dispatch,
                                      sim::Time combine, sim::Time etp_comm, int64_t local_experts, bool attn_graphed,
                                      bool router_graphed) {
  std::vector<IssueStep> out;
  out.push_back(IssueStep{1, dispatch});
  if (etp_comm > sim::Time::zero()) out.push_back(IssueStep{1, sim::Time::ns(etp_comm.count_ns() / 2)});
  // Grouped experts: fc1 and fc2 of every local expert are set up by the host (two GEMMs per
  // expert), the element-wise kernels between them one by one.
  const int64_t gemms = 2 * std::max<int64_t>(local_experts, 1);
  const int others = std::max(moe.experts_fwd.kernels - moe.experts_fwd_gemm_launches, 0);
  out.push_back(IssueStep{gemms + others, moe.experts_fwd.time});
  if (etp_comm > sim::Time::zero()) out.push_back(IssueStep{1, sim::Time::ns(etp_comm.count_ns() / 2)});
  out.push_back(IssueStep{1, combine});
  add_kernels(out, moe.post_fwd);
  add_kernels(out, moe.shared_fwd);
  if (attn_graphed) {
    add_graph(out, next.attn.pre_fwd, next.attn.main_fwd);
  } else {
    add_kernels(out, next.attn.pre_fwd);
    add_kernels(out, next.attn.main_fwd);
  }
  if (router_graphed) {
    add_graph(out, moe.pre_fwd, moe.router_fwd);
  } else {
    add_kernels(out, moe.pre_fwd);
    add_kernels(out, moe.router_fwd);
  }
  return out;
}

}  // namespace trainsim::models::llm
