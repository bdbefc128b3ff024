#include "planner/cli/args.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "models/workload/job/job.hpp"
#include "planner/cli/flags.hpp"
#include "sim/error.hpp"
#include "sim/log.hpp"

namespace trainsim::planner::cli {

using sim::config::Json;

std::string flag_name(const std::string& key) {
  std::string out = "--" + key;
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

namespace {
std::string key_of(const std::string& flag) {
  std::string k = flag.substr(2);
  std::replace(k.begin(), k.end(), '-', '_');
  return k;
}

bool is_integer_text(const std::string& s) {
  size_t i = (s.size() > 1 && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

bool is_number_text(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// A flag value as a JSON scalar: integers, numbers, booleans and null keep their type so the
// schema reports "expected an integer, got 2.5" instead of accepting text.
// A number beyond int64 (integers) or a double (1e400), and nan / inf, stays text: the schema then
// rejects it naming the flag ("expected an integer, got \"1e400\"").
Json scalar(const std::string& v) {
  if (is_integer_text(v)) {
    errno = 0;
    const long long x = std::strtoll(v.c_str(), nullptr, 10);
    if (errno != ERANGE) return Json(static_cast<int64_t>(x));
  }
  if (is_number_text(v)) {
    errno = 0;
    const double x = std::strtod(v.c_str(), nullptr);
    if (std::isfinite(x) && errno != ERANGE) return Json(x);
    if (std::isfinite(x) && x == 0.0) return Json(0.0);  // underflow (1e-400): zero
    return Json(v);
  }
  if (v == "true") return Json(true);
  if (v == "false") return Json(false);
  if (v == "null") return Json(nullptr);
  return Json(v);
}

}  // namespace

std::string display_path(const std::string& path, const Args& args) {
  // Only a value typed on the command line is shown as its flag; a path into a file the flag
  // names (model.hidden) stays a path.
  if (args.job_flags.contains(path)) return flag_name(path);
  return path;
}

void configure_logging(const Args& args) {
  if (args.log) {
    sim::log::configure(sim::log::parse_spec(*args.log, "--log"));
  } else if (const char* env = std::getenv("TRAINSIM_LOG")) {
    sim::log::configure(sim::log::parse_spec(env, "TRAINSIM_LOG"));
  }
}

Args parse_args(int argc, const char* const* argv) {
  Args a;
  std::vector<std::string> job_flags;
  for (const auto& f : models::workload::job_schema().fields()) job_flags.push_back(flag_name(f.key));
  std::vector<std::string> all = job_flags;
  for (const CommandFlag& f : command_flags()) all.push_back(f.name);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      if (a.command.empty())
        a.command = arg;
      else
        a.positionals.push_back(arg);
      continue;
    }
    std::string value;
    bool has_value = false;
    if (const auto eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto next_value = [&](bool optional) -> bool {
      if (has_value) return true;
      if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0 &&
          (!optional || std::string(argv[i + 1]) == "true" || std::string(argv[i + 1]) == "false")) {
        value = argv[++i];
        return true;
      }
      if (optional) return false;
      throw ConfigError(arg, "missing value", "write " + arg + " VALUE");
    };
    const CommandFlag* flag = find_command_flag(arg);
    const bool job_flag = std::find(job_flags.begin(), job_flags.end(), arg) != job_flags.end();
    if (!flag && !job_flag) {
      const std::string near = sim::config::did_you_mean(arg, all);
      throw ConfigError(arg, "unknown option", near.empty() ? "see `trainsim help`" : "did you mean " + near + "?");
    }
    a.given.push_back(arg);
    if (flag && flag->kind == FlagKind::kValue) {
      next_value(false);
      a.command_options[arg.substr(2)] = value;
    } else if (flag && flag->kind == FlagKind::kSwitch) {
      if (has_value) throw ConfigError(arg, "takes no value");
      a.options.insert(arg.substr(2));
    } else if (flag && flag->kind == FlagKind::kBoolSwitch) {
      // Switches: alone, or with true / false.
      if (next_value(true) ? sim::config::read_bool(scalar(value), arg) : true)
        a.options.insert(arg.substr(2));
      else
        a.options.erase(arg.substr(2));
    } else if (flag && flag->kind == FlagKind::kRepeated) {
      next_value(false);
      (arg == "--override" ? a.overrides : arg == "--fault" ? a.faults : a.rates).push_back(value);
    } else if (arg == "--json") {
      a.json = has_value ? sim::config::read_bool(scalar(value), "--json") : true;
    } else if (arg == "--help") {
      if (has_value) throw ConfigError("--help", "takes no value");
      a.options.insert("help");
    } else if (arg == "--log") {
      next_value(false);
      a.log = value;
    } else if (arg == "--time-limit") {
      next_value(false);
      a.time_limit = sim::config::read_time(Json(value), "--time-limit");
      if (a.time_limit <= sim::Time::zero())
        throw ConfigError("--time-limit", "must be above zero", "give a duration such as 10min");
    } else if (arg == "--trace") {
      next_value(false);
      a.trace_file = value;
    } else if (arg == "--link-csv") {
      next_value(false);
      a.link_csv = value;
    } else if (arg == "--gpus" && (has_value || i + 1 < argc) &&
               (has_value ? value : std::string(argv[i + 1])).find(':') != std::string::npos) {
      // A range of cluster sizes (`trainsim plan --gpus 1024:16384`).
      next_value(false);
      a.command_options["gpus-range"] = value;
    } else if (arg == "--fidelity") {
      next_value(false);
      a.fidelity = sim::config::read_enum(Json(value), "--fidelity", {"representative", "full"});
    } else if (job_flag) {
      const std::string key = key_of(arg);
      // The field's schema type decides how the text becomes JSON: booleans may stand alone
      // (--sp), numbers keep their type so the schema can reject 2.5 for an integer, and
      // everything else (names, paths, sizes with units) stays text.
      std::string type;
      for (const auto& f : models::workload::job_schema().fields())
        if (f.key == key) type = f.type;
      if (type == "boolean") {
        a.job_flags[key] = next_value(true) ? scalar(value) : Json(true);
      } else {
        next_value(false);
        const bool numeric = type.rfind("integer", 0) == 0 || type == "number";
        a.job_flags[key] = numeric ? scalar(value) : Json(value);
      }
    } else {
      throw InternalError("flag " + arg + " is in the flag table without a parser");
    }
  }
  return a;
}

}  // namespace trainsim::planner::cli
