#pragma once
// The Megatron-LM (Megatron-Core era) command line of a plan, shared by the megatron and slurm
// emitters: flags in named groups, the environment they need, and what Megatron-LM cannot express.
// Flag names are those of megatron/training/arguments.py (docs/emitters.md has the mapping).

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

// The Megatron-Core release (0.minor) whose flags megatron_command writes: core_v0.15.0, checked
// against planner/emit/flags/megatron-lm_core_v0.15.0.json. One constant until the job's
// software-stack profile names the version.
inline constexpr int kMegatronCoreMinor = 15;

// Throws ConfigError("zero", ...) for a ZeRO stage Megatron-Core 0.`mcore_minor` cannot express:
// ZeRO-2 always (the distributed optimizer keeps a full gradient buffer: ZeRO-1 memory), ZeRO-3
// before Megatron FSDP (0.12).
MegatronCommand megatron_command(const models::workload::Job& j, int mcore_minor = kMegatronCoreMinor);

// Bash: the exports, one array per group and MEGATRON_ARGS joining them all.
std::string render_megatron_arrays(const MegatronCommand& c);
// The notes as a comment block ("Everything maps ..." when there are none).
std::string render_megatron_notes(const MegatronCommand& c);

}  // namespace trainsim::planner::emit::detail
