#include "planner/cli/flags.hpp"

#include <algorithm>

#include "models/workload/job/job.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {

namespace {
const std::vector<std::string> kReaders = {"simulate", "plan",   "reliability", "calibrate",
                                           "validate", "kineto", "ui"};  // the commands that read a job

bool takes(const CommandFlag& f, const std::string& command) {
  return f.commands.empty() || std::find(f.commands.begin(), f.commands.end(), command) != f.commands.end();
}

// "`trainsim a`, `trainsim b` and `trainsim c`" (joined with `last` before the final item).
std::string commands_text(const std::vector<std::string>& commands, const std::string& last) {
  std::string out;
  for (size_t i = 0; i < commands.size(); ++i)
    out += (i ? (i + 1 == commands.size() ? " " + last + " " : ", ") : "") + ("`trainsim " + commands[i] + "`");
  return out;
}

std::string flags_text(const std::vector<std::string>& flags) {
  std::string out;
  for (size_t i = 0; i < flags.size(); ++i) out += (i ? (i + 1 == flags.size() ? " and " : ", ") : "") + flags[i];
  return out;
}
}  // namespace

const std::vector<std::string>& command_names() {
  static const std::vector<std::string> names = {"simulate",  "plan",       "reliability", "ui",
                                                 "calibrate", "collective", "topology",    "validate",
                                                 "kineto",    "list",       "config"};
  return names;
}

const std::vector<CommandFlag>& command_flags() {
  using K = FlagKind;
  const std::vector<std::string> sim{"simulate"}, plan{"plan"}, rel{"reliability"}, plan_rel{"plan", "reliability"},
      coll{"collective"}, topo{"topology"}, val{"validate"}, ui{"ui"}, cal{"calibrate"};
  const std::string to_reliability = "drop it, or run `trainsim reliability`";
  static const std::vector<CommandFlag> flags = {
      // Every command.
      {"--help", K::kOwn, {}, ""},
      {"--log", K::kOwn, {}, ""},
      {"--time-limit", K::kOwn, {}, ""},
      {"--json",
       K::kOwn,
       {"simulate", "plan", "reliability", "calibrate", "collective", "topology", "validate", "kineto"},
       ""},
      // simulate
      {"--trace",
       K::kOwn,
       {"simulate", "validate"},
       "drop it, or run `trainsim simulate` or `trainsim validate --replay iteration`"},
      {"--link-csv", K::kOwn, sim, ""},
      {"--fidelity", K::kOwn, {"simulate", "collective"}, ""},
      {"--strict", K::kSwitch, {"simulate", "plan"}, ""},
      {"--iterations", K::kValue, sim, ""},
      {"--fault", K::kRepeated, sim, ""},
      {"--chakra", K::kValue, sim, "drop it, or run `trainsim simulate --chakra PATH --cluster C`"},
      {"--recorded-gpu", K::kValue, sim, "drop it, or run `trainsim simulate --chakra PATH --recorded-gpu G`"},
      {"--export-chakra", K::kValue, sim,
       "drop it, or run `trainsim simulate ... --fidelity full --export-chakra PREFIX`"},
      {"--plot",
       K::kValue,
       {"simulate", "plan", "kineto", "calibrate"},
       "drop it, or run `trainsim simulate`, `trainsim plan`, `trainsim kineto compare` or `trainsim calibrate`"},
      // plan
      {"--top", K::kValue, plan, ""},
      {"--objective", K::kValue, plan, ""},
      {"--price-per-gpu-hour", K::kValue, plan, ""},
      {"--emit", K::kValue, plan, ""},
      {"--out", K::kValue, {"plan", "kineto", "calibrate"}, ""},
      {"--threads", K::kValue, {"plan", "ui", "calibrate"}, ""},
      {"--rerank", K::kValue, plan, ""},
      {"--rerank-flow", K::kValue, plan, ""},
      {"--headroom", K::kValue, plan, ""},
      {"--max-micro-batch", K::kValue, plan, ""},
      {"--max-vp", K::kValue, plan, ""},
      {"--override", K::kRepeated, plan, "change the cluster or GPU in a file instead"},
      // reliability (plan with --objective goodput)
      {"--tokens", K::kValue, plan_rel, ""},
      {"--days", K::kValue, rel, ""},
      {"--runs", K::kValue, plan_rel, to_reliability},
      {"--checkpoint", K::kValue, plan_rel, to_reliability},
      {"--checkpoint-interval", K::kValue, plan_rel, to_reliability},
      {"--spares", K::kValue, plan_rel, to_reliability},
      {"--elastic", K::kBoolSwitch, plan_rel, to_reliability},
      {"--broadcast-restore", K::kBoolSwitch, plan_rel, to_reliability},
      {"--failures", K::kValue, plan_rel, to_reliability},
      {"--failure-scale", K::kValue, plan_rel, to_reliability},
      {"--rate", K::kRepeated, plan_rel, to_reliability},
      {"--storage-write", K::kValue, plan_rel, to_reliability},
      {"--storage-read", K::kValue, plan_rel, to_reliability},
      // ui
      {"--no-plans", K::kSwitch, ui, ""},
      {"--screenshot", K::kValue, ui, ""},
      {"--size", K::kValue, ui, ""},
      {"--regions", K::kValue, ui, ""},
      // calibrate
      {"--only", K::kValue, cal, ""},
      {"--skip-unusable", K::kSwitch, cal, ""},
      {"--measurements", K::kValue, {"validate", "calibrate"}, ""},
      // collective, topology
      {"--op", K::kValue, coll, ""},
      {"--sizes", K::kValue, coll, ""},
      {"--algo", K::kValue, coll, ""},
      {"--protocol", K::kValue, coll, ""},
      {"--channels", K::kValue, coll, ""},
      {"--dot", K::kValue, topo, ""},
      // validate
      {"--reps", K::kValue, val, ""},
      {"--save", K::kValue, val, ""},
      {"--calibration-out", K::kValue, val, ""},
      {"--replay", K::kValue, val, "drop it, or run `trainsim validate --replay iteration`"},
      {"--backend", K::kValue, val, "drop it, or run `trainsim validate --replay iteration`"},
      {"--time-scale", K::kValue, val, "drop it, or run `trainsim validate --replay iteration`"},
      {"--replay-timeout", K::kValue, val, "drop it, or run `trainsim validate --replay iteration`"},
      // kineto
      {"--rank", K::kValue, {"kineto"}, "drop it, or run `trainsim kineto export`"},
  };
  return flags;
}

const CommandFlag* find_command_flag(const std::string& name) {
  for (const CommandFlag& f : command_flags())
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> job_flags_of(const std::string& command) {
  if (command == "collective") return {"--cluster", "--gpus", "--network"};
  if (command == "topology") return {"--cluster", "--gpus"};
  std::vector<std::string> out;
  if (std::find(kReaders.begin(), kReaders.end(), command) == kReaders.end()) return out;
  for (const auto& f : models::workload::job_schema().fields()) out.push_back(flag_name(f.key));
  return out;
}

std::vector<std::string> flags_of(const std::string& command) {
  std::vector<std::string> out = job_flags_of(command);
  for (const CommandFlag& f : command_flags())
    if (takes(f, command)) out.push_back(f.name);
  return out;
}

const std::vector<std::string>& list_categories() {
  static const std::vector<std::string> kinds = {"models",   "gpus",     "clusters",     "calibrations", "schedules",
                                                 "emitters", "failures", "failure-laws", "checkpoints",  "stacks"};
  return kinds;
}

void check_command_flags(const Args& args) {
  const std::vector<std::string> job_flags = job_flags_of(args.command);
  const bool known = std::find(command_names().begin(), command_names().end(), args.command) != command_names().end();
  for (const std::string& flag : args.given) {
    if (const CommandFlag* f = find_command_flag(flag)) {
      if (!known || takes(*f, args.command)) continue;
      if (f->commands.size() > 3)  // most commands take it: name the one that does not
        throw ConfigError(flag, "does not apply to `trainsim " + args.command + "`",
                          f->hint.empty() ? "drop it" : f->hint);
      throw ConfigError(flag, "only applies to " + commands_text(f->commands, "and"),
                        f->hint.empty() ? "drop it, or run " + commands_text(f->commands, "or") : f->hint);
    }
    if (!known || std::find(job_flags.begin(), job_flags.end(), flag) != job_flags.end()) continue;
    throw ConfigError(flag, "does not apply to `trainsim " + args.command + "`",
                      job_flags.empty() ? "drop it: `trainsim " + args.command + "` reads no job"
                                        : "drop it: `trainsim " + args.command + "` takes " + flags_text(job_flags) +
                                              " of the job flags");
  }
  if (args.command_options.count("gpus-range") && args.command != "plan")
    throw ConfigError("--gpus", "a range MIN:MAX only applies to `trainsim plan`", "give one GPU count");
  if (args.command == "validate" && !args.trace_file.empty() && !args.command_options.count("replay"))
    throw ConfigError("--trace", "only applies to `trainsim validate` with --replay iteration",
                      "add --replay iteration, or drop it");
}

}  // namespace trainsim::planner::cli
