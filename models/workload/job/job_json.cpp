// Job::to_json: the resolved job as the "config" object of every report (simulate --json, plan,
// the viewer), each option under its job-schema key.
#include "models/llm/recompute_modules.hpp"
#include "models/workload/job/cuda_graphs.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/job/moe_options.hpp"

namespace trainsim::models::workload {

using sim::config::Json;

namespace {
// The modules selective recompute redoes, as a list (null without selective recompute).
Json recompute_modules_json(const Job& j) {
  if (j.recompute != Recompute::kSelective) return nullptr;
  return sim::config::name_set_items(j.recompute_modules, llm::recompute_module_names());
}
}  // namespace

Json Job::to_json() const {
  Json out{{"model", model.name},
           {"cluster", cluster.name},
           {"gpu", gpu.name},
           {"gpus", gpus},
           {"tp", tp},
           {"pp", pp},
           {"dp", dp},
           {"vp", vp},
           {"sp", sp},
           {"cp", cp},
           {"cp_algo", to_string(cp_algo)},
           {"cp_ulysses", cp_ulysses},
           {"ep", ep},
           {"etp", etp},
           {"pp_layout", layers},
           {"zero", zero},
           {"optimizer_states", to_string(optimizer_states)},
           {"dp_shard", dp_shard},
           {"reshard_after_forward", reshard_after_forward},
           {"prefetch_layers", prefetch_layers},
           {"recompute", to_string(recompute)},
           {"recompute_layers", recompute_layers},
           {"recompute_modules", recompute_modules_json(*this)},
           {"offload_optimizer", offload_optimizer},
           {"offload_activations", offload_activations},
           {"tp_comm_overlap", tp_comm_overlap},
           {"overlap_param_gather", overlap_param_gather},
           {"fp8_param_gather", fp8_param_gather},
           {"torch_compile", torch_compile},
           {"compile_loss", compile_loss},
           {"dp_comm_weight", dp_comm_weight},
           {"micro_batch", micro_batch},
           {"global_batch", global_batch},
           {"microbatches", microbatches},
           {"seq_len", seq_len},
           {"schedule", schedule},
           {"precision", compute::to_string(precision)},
           {"attention", to_string(attention)},
           {"overlap_grad_reduce", overlap_grad_reduce},
           {"overlap_p2p", overlap_p2p},
           {"scatter_gather", scatter_gather},
           {"bucket_size_bytes", bucket_size.count()},
           {"kernel_dispatch_s", kernel_dispatch.seconds()},
           {"network", to_string(network)},
           {"seed", seed}};
  // Only when set, so that reports of uncalibrated runs are unchanged.
  if (calibration) out["calibration"] = calibration->name;
  if (model.moe) add_moe_json(*this, out);
  if (cluster.nvlink_domain > 0) out["nvlink_segment"] = cluster.nvlink_domain;  // rack-scale domains only
  if (offload_activation_layers > 0) out["offload_activation_layers"] = offload_activation_layers;
  if (bf16_first_layers > 0) out["bf16_first_layers"] = bf16_first_layers;
  if (bf16_last_layers > 0) out["bf16_last_layers"] = bf16_last_layers;
  if (cuda_graphs != 0) out["cuda_graph_scope"] = sim::config::name_set_items(cuda_graphs, cuda_graph_scope_names());
  out["stack"] = stack.name;
  return out;
}

}  // namespace trainsim::models::workload
