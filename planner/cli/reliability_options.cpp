#include "planner/cli/reliability_options.hpp"

#include <cstdlib>

#include "models/failure/checkpoint.hpp"
#include "planner/cli/options.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::cli {

ReliabilitySetup reliability_setup(const Args& args, int64_t seed) {
  namespace mf = models::failure;
  ReliabilitySetup s;
  mf::ReliabilityOptions& o = s.options;
  o.seed = static_cast<uint64_t>(seed);
  o.checkpoint = option(args, "checkpoint", "sync");
  mf::CheckpointRegistry::instance().get(o.checkpoint, "--checkpoint");
  if (option(args, "checkpoint-interval", "auto") != "auto") {
    o.interval = time_option(args, "checkpoint-interval");
    if (*o.interval <= sim::Time::zero())
      throw ConfigError("--checkpoint-interval", "must be positive", "e.g. --checkpoint-interval 30min, or auto");
  }
  if (args.command_options.count("spares")) o.spares = int_option(args, "spares", 0, 0, 1000000);
  o.elastic = args.options.count("elastic") > 0;
  o.broadcast_restore = args.options.count("broadcast-restore") > 0;
  if (args.command_options.count("tokens")) o.tokens = parse_tokens(args.command_options.at("tokens"));
  if (args.command_options.count("days")) {
    // A number of days, or a duration with its unit.
    const std::string text = args.command_options.at("days");
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (!text.empty() && *end == '\0') {
      if (!(d > 0) || d > 100000)
        throw ConfigError("--days", "expected a positive number of days, got \"" + text + "\"", "e.g. --days 54");
      o.horizon = sim::Time::from_seconds_ceil(d * 86400.0);
    } else {
      o.horizon = time_option(args, "days");
      if (*o.horizon <= sim::Time::zero()) throw ConfigError("--days", "must be positive", "e.g. --days 54");
    }
  }
  if (o.tokens && o.horizon)
    throw ConfigError("--days", "give the tokens to train or the days to run, not both", "drop --tokens or --days");
  o.runs = int_option(args, "runs", 1000, 1, 1000000);
  o.storage_write = bandwidth_option(args, "storage-write");
  o.storage_read = bandwidth_option(args, "storage-read");
  if (o.checkpoint == "in-memory") {
    // Restarts restore from a peer host's memory, not from the persistent tier.
    if (o.broadcast_restore)
      throw ConfigError("--broadcast-restore",
                        "has no effect with --checkpoint in-memory (restarts read a peer's memory)",
                        "drop it, or use another --checkpoint");
    if (o.storage_read)
      throw ConfigError("--storage-read", "has no effect with --checkpoint in-memory (restarts read a peer's memory)",
                        "drop it, or use another --checkpoint");
  }
  const double scale = number_option(args, "failure-scale", 1.0, 0.0, 1e6);
  if (!(scale > 0))
    throw ConfigError("--failure-scale", "must be positive, got \"" + args.command_options.at("failure-scale") + "\"",
                      "e.g. --failure-scale 2 for twice the failures");
  s.profile = mf::load_failure_profile(option(args, "failures", "default"), args.rates, scale);
  return s;
}

}  // namespace trainsim::planner::cli
