// --emit megatron: megatron_args.sh, the Megatron-LM (Megatron-Core era) command line of the plan
// as bash arrays. Sourced, it defines MEGATRON_ARGS; executed, it runs this node's ranks with
// torchrun (the same command on every node, c10d rendezvous).
#include "planner/emit/detail/format.hpp"
#include "planner/emit/detail/megatron_args.hpp"
#include "planner/emit/emitter.hpp"

namespace trainsim::planner::emit {
namespace {

std::vector<EmittedFile> emit_megatron(const models::workload::Job& j) {
  const detail::MegatronCommand cmd = detail::megatron_command(j);
  const detail::LaunchShape shape = detail::launch_shape(j);
  std::string out = "#!/usr/bin/env bash\n";
  out += detail::comment(
      detail::header(j, "megatron", "Megatron-LM command-line arguments (megatron/training/arguments.py)."), "# ");
  out += "#\n";
  out += detail::comment(
      {"Use: source megatron_args.sh, then pass \"${MEGATRON_ARGS[@]}\" to pretrain_gpt.py; or run "
       "it on each of the " +
       std::to_string(shape.nodes) + " nodes with MASTER_ADDR set to the first node (torchrun, c10d rendezvous)."},
      "# ");
  out += "#\n" + detail::render_megatron_notes(cmd) + "\n";
  out += detail::render_megatron_arrays(cmd);
  out += "\nif [[ \"${BASH_SOURCE[0]}\" == \"$0\" ]]; then\n";
  out += "  exec torchrun --nnodes " + std::to_string(shape.nodes) + " --nproc-per-node " +
         std::to_string(shape.procs_per_node) + " \\\n";
  out += "    --rdzv-id \"${RDZV_ID:-trainsim}\" --rdzv-backend c10d \\\n";
  out += "    --rdzv-endpoint \"${MASTER_ADDR:?set MASTER_ADDR to the first node}:${MASTER_PORT:-29500}\" \\\n";
  out += "    \"${MEGATRON_LM_DIR:-.}/pretrain_gpt.py\" \"${MEGATRON_ARGS[@]}\"\n";
  out += "fi\n";
  return {EmittedFile{"megatron_args.sh", out, true}};
}

}  // namespace
}  // namespace trainsim::planner::emit

TRAINSIM_REGISTER_EMITTER(megatron, "megatron",
                          "Megatron-LM arguments (megatron_args.sh: bash arrays, runnable through torchrun)",
                          ::trainsim::planner::emit::emit_megatron)
