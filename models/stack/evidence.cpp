#include "models/stack/evidence.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/error.hpp"

namespace trainsim::models::stack {

using sim::config::Json;

namespace {

constexpr double kRangeSlack = 2.0;

const std::vector<std::string>& list_keys() {
  static const std::vector<std::string> k = {"stacks", "precisions", "clusters", "gpu_presets"};
  return k;
}
const std::vector<std::string>& range_keys() {
  static const std::vector<std::string> k = {"gpus",   "params_b", "seq_len",      "gemm_m",
                                             "gemm_n", "gemm_k",   "message_bytes"};
  return k;
}
const std::vector<std::string>& flag_keys() {
  static const std::vector<std::string> k = {"dense", "moe"};
  return k;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The field behind a key, for a const or a mutable Evidence.
template <typename E>
auto* list_of(E& e, const std::string& key) {
  if (key == "stacks") return &e.stacks;
  if (key == "precisions") return &e.precisions;
  if (key == "clusters") return &e.clusters;
  return &e.gpu_presets;
}

template <typename E>
auto* range_of(E& e, const std::string& key) {
  if (key == "gpus") return &e.gpus;
  if (key == "params_b") return &e.params_b;
  if (key == "gemm_m") return &e.gemm_m;
  if (key == "gemm_n") return &e.gemm_n;
  if (key == "gemm_k") return &e.gemm_k;
  if (key == "message_bytes") return &e.message_bytes;
  return &e.seq_len;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

void check_list(const std::vector<std::string>& allowed, const std::string& value, const char* what,
                std::vector<std::string>& out) {
  if (allowed.empty() || value.empty() || contains(allowed, value)) return;
  out.push_back(std::string(what) + " " + value + " (measured: " + sim::config::join(allowed) + ")");
}

void check_range(const std::optional<std::pair<double, double>>& r, double v, const char* what,
                 std::vector<std::string>& out) {
  if (!r || v <= 0) return;
  if (v * kRangeSlack >= r->first && v <= r->second * kRangeSlack) return;
  out.push_back(std::string(what) + " " + number(v) + " (measured " + number(r->first) + "-" + number(r->second) + ")");
}

// A span of the job against a measured range: outside when its low end is more than 2x below it,
// or (with `above`) its high end more than 2x above. Values are printed divided by `unit` (GEMM
// dimensions as they are, buffers in MiB).
void check_span(const Range& measured, const Range& job, const char* what, double unit, bool above,
                std::vector<std::string>& out) {
  if (!measured || !job) return;
  if (job->first * kRangeSlack >= measured->first && (!above || job->second <= measured->second * kRangeSlack)) return;
  const auto text = [unit](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, unit == 1.0 ? "%.0f" : "%.4g", v / unit);
    return std::string(buf);
  };
  const std::string span = job->first == job->second ? text(job->first) : text(job->first) + "-" + text(job->second);
  out.push_back(std::string(what) + " " + span + " (measured " + text(measured->first) + "-" + text(measured->second) +
                ")");
}

}  // namespace

void extend(Range& r, double v) {
  if (v <= 0) return;
  if (!r) r = std::make_pair(v, v);
  r->first = std::min(r->first, v), r->second = std::max(r->second, v);
}

bool Evidence::empty() const {
  return stacks.empty() && precisions.empty() && clusters.empty() && gpu_presets.empty() && !gpus && !params_b &&
         !seq_len && !dense && !moe && !gemm_m && !gemm_n && !gemm_k && !message_bytes;
}

Evidence parse_evidence(const Json& j, const std::string& path) {
  if (!j.is_object()) throw ConfigError(path, "expected an object, got " + sim::config::json_type_name(j));
  Evidence e;
  std::vector<std::string> keys = list_keys();
  keys.insert(keys.end(), range_keys().begin(), range_keys().end());
  keys.insert(keys.end(), flag_keys().begin(), flag_keys().end());
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string p = path + "." + it.key();
    if (contains(list_keys(), it.key())) {
      if (!it->is_array()) throw ConfigError(p, "expected an array of names");
      for (const auto& v : *it) {
        if (!v.is_string()) throw ConfigError(p, "expected an array of names");
        list_of(e, it.key())->push_back(v.get<std::string>());
      }
    } else if (contains(range_keys(), it.key())) {
      if (!it->is_array() || it->size() != 2)
        throw ConfigError(p, "expected [min, max]", "e.g. \"" + it.key() + "\": [8, 512]");
      const double lo = sim::config::read_number(it->at(0), p + "[0]", 0.0, 1e12);
      const double hi = sim::config::read_number(it->at(1), p + "[1]", 0.0, 1e12);
      if (hi < lo) throw ConfigError(p, "max is below min", "write [min, max]");
      *range_of(e, it.key()) = std::make_pair(lo, hi);
    } else if (contains(flag_keys(), it.key())) {
      if (!it->is_boolean()) throw ConfigError(p, "expected true or false");
      (it.key() == "dense" ? e.dense : e.moe) = it->get<bool>();
    } else {
      const std::string near = sim::config::did_you_mean(it.key(), keys);
      throw ConfigError(p, "unknown evidence key",
                        near.empty() ? "use " + sim::config::join(keys) : "did you mean \"" + near + "\"?");
    }
  }
  return e;
}

Json to_json(const Evidence& e) {
  Json out = Json::object();
  for (const auto& k : list_keys())
    if (!list_of(e, k)->empty()) out[k] = *list_of(e, k);
  for (const auto& k : range_keys())
    if (const auto& r = *range_of(e, k)) out[k] = {r->first, r->second};
  if (e.dense) out["dense"] = *e.dense;
  if (e.moe) out["moe"] = *e.moe;
  return out;
}

double error_band(std::vector<double> v) {
  if (v.empty()) return 0;
  for (auto& x : v) x = std::abs(x);
  std::sort(v.begin(), v.end());
  if (v.size() < 4) return v.back();
  const double pos = 0.68 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::vector<std::string> outside(const Evidence& e, const Coverage& c) {
  std::vector<std::string> out;
  check_list(e.gpu_presets, c.gpu, "GPU", out);
  check_list(e.stacks, c.stack, "stack", out);
  check_list(e.precisions, c.precision, "precision", out);
  check_list(e.clusters, c.cluster, "cluster", out);
  check_range(e.gpus, c.gpus, "GPUs", out);
  check_range(e.params_b, c.params_b, "parameters (B)", out);
  check_range(e.seq_len, c.seq_len, "sequence length", out);
  if (c.moe && e.moe && !*e.moe) out.push_back("an MoE model (measured: dense only)");
  if (!c.moe && e.dense && !*e.dense) out.push_back("a dense model (measured: MoE only)");
  // GEMMs larger than the measured ones run at the saturated efficiency the largest measured show;
  // smaller ones depend on tile padding and wave quantization that nothing measured.
  check_span(e.gemm_m, c.gemm_m, "GEMM m", 1.0, false, out);
  check_span(e.gemm_n, c.gemm_n, "GEMM n", 1.0, false, out);
  check_span(e.gemm_k, c.gemm_k, "GEMM k", 1.0, false, out);
  check_span(e.message_bytes, c.message_bytes, "collective buffers (MiB)", 1048576.0, true, out);
  return out;
}

}  // namespace trainsim::models::stack
