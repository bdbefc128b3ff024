#pragma once
// The Megatron-LM (Megatron-Core era) command line of a plan, shared by the megatron and slurm
// emitters: flags in named groups, the environment they need, and what Megatron-LM cannot express.
// Flag names are those of megatron/training/arguments.py (docs/emitters.md has the mapping).

#include <optional>
#include <string>
#include <vector>

#include "models/workload/job/job.hpp"
#include "planner/emit/detail/format.hpp"

namespace trainsim::planner::emit::detail {

struct MegatronCommand {
  std::vector<std::string> env;  // "NAME=value" exported before launch
  std::vector<std::string> env_comments;
  std::vector<ShellArgGroup> groups;
  std::vector<std::string> notes;  // what Megatron-LM cannot express and what to check
};

// The Megatron-Core release (0.minor) flags are written for when the job's software stack names
// none: core_v0.15.0, checked against planner/emit/flags/megatron-lm_core_v0.15.0.json.
inline constexpr int kMegatronCoreMinor = 15;

// The minor version of a stack target naming a Megatron-Core release of NVIDIA/Megatron-LM
// ("NVIDIA/Megatron-LM@core_r0.8.0" -> 8, "...@core_v0.15.0" -> 15) or a Megatron-Bridge release
// by the Megatron-Core it runs ("NVIDIA-NeMo/Megatron-Bridge@v0.1.0" or "@25.09" -> 14, "@v0.2.0"
// or "@25.11" -> 15); nullopt for anything else (another framework, or a Megatron-LM tag before
// Megatron-Core such as v2.5).
std::optional<int> megatron_core_minor(const std::string& target);
// The release a job's flags are written for: its stack's, else kMegatronCoreMinor (with a note).
int megatron_core_minor(const models::workload::Job& j);

// The command line for Megatron-Core 0.`mcore_minor`. Before 0.10 it writes only the flags of
// core_r0.8.0 (the pinned older flag set) and notes what those cannot express. Throws
// ConfigError("zero", ...) for a ZeRO stage the release cannot express: ZeRO-2 and ZeRO-3 before
// Megatron FSDP (0.12; optim_grads and optim_grads_params sharding).
MegatronCommand megatron_command(const models::workload::Job& j, int mcore_minor);
// megatron_command for the release of the job's stack (megatron_core_minor(j)).
MegatronCommand megatron_command(const models::workload::Job& j);

// Bash: the exports, one array per group and MEGATRON_ARGS joining them all.
std::string render_megatron_arrays(const MegatronCommand& c);
// The notes as a comment block ("Everything maps ..." when there are none).
std::string render_megatron_notes(const MegatronCommand& c);

}  // namespace trainsim::planner::emit::detail
