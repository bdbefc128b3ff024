#include "models/workload/job/moe_options.hpp"

#include <algorithm>

#include "models/workload/job/expert_layout.hpp"
#include "models/workload/job/job.hpp"

namespace trainsim::models::workload {

void moe_fields(sim::config::Schema<JobSpec>& s) {
  s.enumeration("moe_dispatcher", &JobSpec::moe_dispatcher, option_names<llm::MoeDispatcher>(),
                llm::MoeDispatcher::kAllToAll,
                "MoE token dispatcher (Megatron-Core --moe-token-dispatcher-type; docs/parallelism.md): `alltoall` "
                "permutes the (token, expert) rows and all-to-alls them over the EP group (then all-gathers over "
                "expert-TP); `allgather` all-gathers every token over EP x ETP, keeps the local experts' rows and "
                "reduce-scatters the outputs back (more bytes, no all-to-all); `flex` runs DeepEP's fused "
                "dispatch/combine, which sends a token once per node (and once per GPU inside a node). The "
                "stack lists the ones it runs (stack.features.moe_dispatchers).")
      .enumeration("moe_balance", &JobSpec::moe_balance, option_names<llm::MoeBalance>(), llm::MoeBalance::kAuxLoss,
                   "MoE router load balancing: `aux_loss` (the load-balancing loss, Megatron "
                   "--moe-router-load-balancing-type aux_loss: its kernels run in every MoE layer, the model's "
                   "router_skew is the imbalance left) or `aux_free` (DeepSeek-V3's per-expert score bias, "
                   "--moe-router-enable-expert-bias: no auxiliary loss, and the imbalance shrinks to the one "
                   "Wang et al. 2024 measured without the loss: the skew whose hottest-expert excess is 0.04/0.52 "
                   "of router_skew's).");
}

int64_t ep_ranks_per_node(const Job& j) { return expert_layout(j).ep_group().per_node; }

bool moe_dispatch_syncs(const Job& j) {
  return j.model.moe && j.stack.host.moe_dispatch_sync && !j.model.moe->pad_to_capacity;
}

llm::MoeRun moe_run(const Job& j) {
  return llm::MoeRun{j.moe_dispatcher, j.moe_balance, ep_ranks_per_node(j),
                     static_cast<int>(j.stack.kernels.grouped_gemm_streams)};
}

void add_moe_json(const Job& j, sim::config::Json& out) {
  out["moe_dispatcher"] = to_string(j.moe_dispatcher);
  out["moe_balance"] = to_string(j.moe_balance);
}

}  // namespace trainsim::models::workload
