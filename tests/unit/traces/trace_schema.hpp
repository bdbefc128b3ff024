#pragma once
// Checks a parsed Chrome trace-event JSON document against the format rules trainsim's traces
// follow, and returns one message per violation (empty: valid). Rules:
//  - a top-level object with a "traceEvents" array of objects;
//  - every event has "ph" in {X, C, s, f, M} and an integer "pid";
//  - X: string name, numeric ts, dur >= 0, integer tid; ts non-decreasing per (pid, tid);
//  - C: string name, numeric ts, an "args" object whose values are all numbers;
//  - s / f: integer id, numeric ts; every s id has exactly one f, with f.ts >= s.ts; f has "bp":"e";
//  - M: an "args" object with "name" (process_name / thread_name) or "sort_index";
//  - no number is NaN or infinite (null in place of a number fails the type checks).

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim::traces::testing {

inline std::vector<std::string> trace_schema_errors(const nlohmann::json& doc) {
  std::vector<std::string> errors;
  const auto fail = [&](size_t i, const std::string& what) {
    std::ostringstream os;
    os << "event " << i << ": " << what;
    errors.push_back(os.str());
  };
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    errors.emplace_back("top level: not an object with a traceEvents array");
    return errors;
  }
  const auto finite = [](const nlohmann::json& v) { return v.is_number() && std::isfinite(v.get<double>()); };
  std::map<std::pair<int64_t, int64_t>, double> last_x_ts;
  std::map<int64_t, std::pair<double, int>> flow_starts;  // id -> (s ts, f count)
  std::map<int64_t, double> flow_ends;
  const auto& events = doc["traceEvents"];
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    if (!e.is_object()) {
      fail(i, "not an object");
      continue;
    }
    if (!e.contains("ph") || !e["ph"].is_string()) {
      fail(i, "no ph");
      continue;
    }
    const std::string ph = e["ph"].get<std::string>();
    if (ph != "X" && ph != "C" && ph != "s" && ph != "f" && ph != "M") fail(i, "ph " + ph + " not allowed");
    if (!e.contains("pid") || !e["pid"].is_number_integer()) fail(i, "no integer pid");
    const bool has_ts = e.contains("ts") && finite(e["ts"]);
    if (ph == "X") {
      if (!e.contains("name") || !e["name"].is_string()) fail(i, "X without name");
      if (!has_ts) fail(i, "X without a finite ts");
      if (!e.contains("dur") || !finite(e["dur"]) || e["dur"].get<double>() < 0) fail(i, "X without dur >= 0");
      if (!e.contains("tid") || !e["tid"].is_number_integer()) fail(i, "X without integer tid");
      if (has_ts && e.contains("tid") && e["tid"].is_number_integer() && e.contains("pid") &&
          e["pid"].is_number_integer()) {
        const auto key = std::make_pair(e["pid"].get<int64_t>(), e["tid"].get<int64_t>());
        const double ts = e["ts"].get<double>();
        const auto it = last_x_ts.find(key);
        if (it != last_x_ts.end() && ts < it->second) fail(i, "X ts goes backwards on its (pid, tid)");
        last_x_ts[key] = ts;
      }
    } else if (ph == "C") {
      if (!e.contains("name") || !e["name"].is_string()) fail(i, "C without name");
      if (!has_ts) fail(i, "C without a finite ts");
      if (!e.contains("args") || !e["args"].is_object() || e["args"].empty()) {
        fail(i, "C without an args object");
      } else {
        for (const auto& [k, v] : e["args"].items())
          if (!finite(v)) fail(i, "C arg " + k + " is not a finite number");
      }
    } else if (ph == "s" || ph == "f") {
      if (!has_ts) fail(i, ph + " without a finite ts");
      if (!e.contains("id") || !e["id"].is_number_integer()) {
        fail(i, ph + " without integer id");
        continue;
      }
      const int64_t id = e["id"].get<int64_t>();
      const double ts = has_ts ? e["ts"].get<double>() : 0;
      if (ph == "s") {
        if (flow_starts.count(id)) fail(i, "flow id repeated by s");
        flow_starts[id] = {ts, 0};
      } else {
        if (!e.contains("bp") || e["bp"] != "e") fail(i, "f without \"bp\":\"e\"");
        if (flow_ends.count(id)) fail(i, "flow id repeated by f");
        flow_ends[id] = ts;
      }
    } else if (ph == "M") {
      if (!e.contains("args") || !e["args"].is_object() ||
          !(e["args"].contains("name") || e["args"].contains("sort_index")))
        fail(i, "M without args.name");
    }
  }
  for (const auto& [id, s] : flow_starts) {
    const auto it = flow_ends.find(id);
    std::ostringstream os;
    os << "flow " << id << ": ";
    if (it == flow_ends.end())
      errors.push_back(os.str() + "s without f");
    else if (it->second < s.first)
      errors.push_back(os.str() + "f before s");
  }
  for (const auto& [id, ts] : flow_ends)
    if (!flow_starts.count(id)) {
      std::ostringstream os;
      os << "flow " << id << ": f without s";
      errors.push_back(os.str());
    }
  return errors;
}

}  // namespace trainsim::traces::testing
