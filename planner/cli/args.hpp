#pragma once
// Command-line parsing: `trainsim COMMAND [JOB.json] --flag value ...`. Job flags map to job keys
// (--micro-batch -> "micro_batch"); their values become JSON scalars and go through the same
// schema as job files, so a flag and a file key are validated identically.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/config/schema.hpp"

namespace trainsim::planner::cli {

struct Args {
  std::string command;
  std::vector<std::string> positionals;
  std::vector<std::string> given;  // every flag given, in order ("--tp"): check_command_flags (flags.hpp) reads it
  sim::config::Json job_flags = sim::config::Json::object();  // job keys given as flags
  std::set<std::string> options;                              // switches given (help, elastic, broadcast-restore)
  std::string trace_file;
  std::string link_csv;  // --link-csv: per-link utilization over time (flow network)
  std::string fidelity = "representative";
  std::map<std::string, std::string>
      command_options;  // --op, --sizes, --algo, --dot, --measurements, --save, --calibration-out, --reps, and plan's
                        // --top, --objective, --tokens, --price-per-gpu-hour, --emit, --out, --threads, --rerank,
                        // --headroom, --max-micro-batch, --max-vp, --gpus-range; simulate's --iterations;
                        // reliability's --runs, --days, --checkpoint, --checkpoint-interval, --spares,
                        // --failures, --failure-scale, --storage-write, --storage-read
  std::vector<std::string> overrides;  // --override cluster.KEY=VALUE / gpu.KEY=VALUE (repeatable)
  std::vector<std::string> faults;     // simulate --fault SPEC (repeatable): faults inside the simulation
  std::vector<std::string> rates;      // reliability / plan --rate KIND=RATE (repeatable)
  bool json = false;
  std::optional<std::string> log;  // --log SPEC (every command): diagnostic categories on stderr
  // --time-limit (every command): wall-clock limit, past which the run stops with exit 2.
  sim::Time time_limit = sim::Time::from_seconds_ceil(3600.0);
};

// Throws ConfigError for unknown flags (with a did-you-mean) and missing values.
Args parse_args(int argc, const char* const* argv);

// Sets the diagnostic log thresholds (sim/log.hpp) from --log, else from the environment variable
// TRAINSIM_LOG (the flag wins; neither: everything off). Throws ConfigError for a bad spec.
void configure_logging(const Args& args);

// "micro_batch" -> "--micro-batch".
std::string flag_name(const std::string& key);
// Rewrites "micro_batch: ..." paths into "--micro-batch" when the key came from a flag.
std::string display_path(const std::string& path, const Args& args);

}  // namespace trainsim::planner::cli
