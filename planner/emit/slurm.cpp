// --emit slurm: train.sbatch, one Slurm batch job for the plan: whole nodes, one task per node,
// torchrun in each task spawning that node's ranks (c10d rendezvous on the first node), running
// Megatron-LM's pretrain_gpt.py with the plan's arguments (the same as --emit megatron).
#include <cctype>

#include "planner/emit/detail/format.hpp"
#include "planner/emit/detail/megatron_args.hpp"
#include "planner/emit/emitter.hpp"

namespace trainsim::planner::emit {
namespace {

std::string job_name(const models::workload::Job& j) {
  std::string name = "trainsim-" + j.model.name;
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '-';
  return name;
}

// Nodes per Slurm segment on a cluster whose NVLink domain spans nodes (an NVL72 rack of 18
// 4-GPU trays): Slurm's topology/block plugin places each segment of --segment nodes inside one
// block, the rack. The whole job when it fits one domain, else the domain's node count, else (the
// count must divide the job's nodes) the largest divisor below it; 0 when domains are single nodes.
int64_t segment_nodes(const models::workload::Job& j, int64_t nodes) {
  const int64_t per_domain = j.cluster.domain_gpus() / j.cluster.gpus_per_node;
  if (per_domain <= 1) return 0;
  if (nodes <= per_domain) return nodes;
  int64_t d = per_domain;
  while (nodes % d != 0) --d;
  return d;
}

std::vector<EmittedFile> emit_slurm(const models::workload::Job& j) {
  const detail::MegatronCommand cmd = detail::megatron_command(j);
  const detail::LaunchShape shape = detail::launch_shape(j);
  const std::string nodes = std::to_string(shape.nodes), per_node = std::to_string(shape.procs_per_node);
  std::string out = "#!/bin/bash\n";
  out += "#SBATCH --job-name=" + job_name(j) + "\n";
  out += "#SBATCH --nodes=" + nodes + "\n";
  out += "#SBATCH --ntasks-per-node=1\n";
  out += "#SBATCH --gpus-per-node=" + per_node + "\n";
  const int64_t segment = segment_nodes(j, shape.nodes);
  if (segment > 0) out += "#SBATCH --segment=" + std::to_string(segment) + "\n";
  out += "#SBATCH --exclusive\n";
  out += "#SBATCH --time=04:00:00\n";
  out += "#SBATCH --output=%x-%j.out\n";
  out += "#\n";
  out += detail::comment(detail::header(j, "slurm",
                                        "Slurm batch script: " + nodes + " node(s) x " + per_node +
                                            " GPUs, one task per node running torchrun, Megatron-LM pretrain_gpt.py."),
                         "# ");
  out += "#\n";
  std::vector<std::string> launch = {
      "Submit from the Megatron-LM checkout (or set MEGATRON_LM_DIR): sbatch train.sbatch. --time, --output and the "
      "placeholder data/optimizer arguments are yours to set; add --partition/--account as your cluster needs."};
  if (!shape.whole_nodes)
    launch.push_back("The plan's " + std::to_string(j.gpus) + " GPUs do not fill whole " +
                     std::to_string(j.cluster.gpus_per_node) + "-GPU nodes: each node runs " + per_node +
                     " ranks (torchrun needs the same count on every node).");
  if (segment > 0) {
    const int64_t per_domain = j.cluster.domain_gpus() / j.cluster.gpus_per_node;
    launch.push_back("--segment keeps each group of " + std::to_string(segment) +
                     " nodes inside one NVLink domain (the job's " + std::to_string(j.cluster.domain_gpus()) +
                     " GPUs of each rack, its nvlink_segment); it needs Slurm's topology/block plugin with one "
                     "block per domain.");
    if (segment != per_domain && shape.nodes > per_domain)
      launch.push_back("The plan packs ranks into " + std::to_string(per_domain) + "-node domains; " + nodes +
                       " nodes are not a multiple of " + std::to_string(per_domain) +
                       ", so Slurm allocates segments of " + std::to_string(segment) +
                       " and the NVLink groups can differ from the simulated ones.");
  }
  out += detail::comment(launch, "# ");
  out += "#\n" + detail::render_megatron_notes(cmd) + "\n";
  out += "set -euo pipefail\n\n";
  out += detail::render_megatron_arrays(cmd);
  out += "\n";
  out += "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
  out += "MASTER_PORT=${MASTER_PORT:-29500}\n\n";
  out += "srun --kill-on-bad-exit=1 torchrun \\\n";
  out += "  --nnodes " + nodes + " --nproc-per-node " + per_node + " \\\n";
  out += "  --rdzv-id \"$SLURM_JOB_ID\" --rdzv-backend c10d --rdzv-endpoint \"$MASTER_ADDR:$MASTER_PORT\" \\\n";
  out += "  \"${MEGATRON_LM_DIR:-$PWD}/pretrain_gpt.py\" \"${MEGATRON_ARGS[@]}\"\n";
  return {EmittedFile{"train.sbatch", out, true}};
}

}  // namespace
}  // namespace trainsim::planner::emit

TRAINSIM_REGISTER_EMITTER(slurm, "slurm",
                          "Slurm sbatch script (train.sbatch: srun + torchrun per node, Megatron-LM pretrain_gpt.py)",
                          ::trainsim::planner::emit::emit_slurm)
