#pragma once
// Launch-config emitters: a resolved plan (models::workload::Job) turned into the files a team
// runs on a real cluster (Megatron-LM arguments, a NeMo 2.0 recipe, a DeepSpeed config, a
// torchtitan TOML, a Slurm sbatch script). Each emitter is a pure function of the Job (same Job,
// same bytes) and registers itself from its own file with TRAINSIM_REGISTER_EMITTER. What a
// framework cannot express is said in comments of the files it writes (docs/emitters.md).

#include <functional>
#include <string>
#include <vector>

#include "models/workload/job/job.hpp"
#include "sim/registry.hpp"

namespace trainsim::planner::emit {

// One file an emitter writes: a bare file name (no directories) and its bytes.
struct EmittedFile {
  std::string name;
  std::string content;
  bool executable = false;  // a shell script: written with the execute bits set
};

using EmitFn = std::function<std::vector<EmittedFile>(const models::workload::Job&)>;

struct EmitterInfo {
  static constexpr const char* kWhat = "launch-config emitter";  // in errors: unknown launch-config emitter "x"
  std::string name;         // the --emit value: megatron, nemo, deepspeed, torchtitan, slurm
  std::string description;  // one line for `trainsim list emitters` and errors
  EmitFn emit;
};

// Immutable registry built at start-up from the self-registering files, sorted by name; get()
// throws ConfigError(path, ...) listing the valid names when `name` is unknown.
using EmitterRegistry = sim::Registry<EmitterInfo>;

// The files of emitter `name` for `job` (ConfigError at `path` for an unknown name).
std::vector<EmittedFile> emit(const std::string& name, const models::workload::Job& job,
                              const std::string& path = "--emit");

// Writes `files` into `dir` (created with its parents if missing) and returns the written paths
// in order. Throws ConfigError("--out", ...) when the directory or a file cannot be written.
std::vector<std::string> write_files(const std::string& dir, const std::vector<EmittedFile>& files);

}  // namespace trainsim::planner::emit

// Registers emitter `name` (a string literal) from its own .cpp; `fn` is an EmitFn.
#define TRAINSIM_REGISTER_EMITTER(id, name, description, fn)                                             \
  namespace {                                                                                            \
  const ::trainsim::planner::emit::EmitterRegistry::Registrar trainsim_emitter_registrar_##id{           \
      ::trainsim::planner::emit::EmitterInfo{name, description, ::trainsim::planner::emit::EmitFn{fn}}}; \
  }
