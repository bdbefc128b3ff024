#include "models/hardware/calibration.hpp"

#include <algorithm>

namespace trainsim::models::hardware {

using sim::config::Json;

namespace {
std::string child(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Each override goes through its field's own setter (range, type and unit checks of the GPU or
// cluster schema) with the calibration's path, so "calibration.gpu_overrides.hbm_efficiency:
// must be between 0.05 and 1" names the line to fix.
template <typename Spec>
void check_overrides(const Json& j, const std::string& path, const sim::config::Schema<Spec>& schema,
                     const std::vector<std::string>& allowed) {
  if (!j.is_object())
    throw ConfigError(path, "expected an object mapping " + schema.name() + " fields to values, got " +
                                sim::config::json_type_name(j));
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string p = child(path, it.key());
    if (!contains(allowed, it.key())) {
      bool in_schema = false;
      for (const auto& f : schema.fields()) in_schema = in_schema || f.key == it.key();
      if (in_schema)
        throw ConfigError(p, "\"" + it.key() + "\" is not a calibrated " + schema.name() + " constant",
                          "calibrations override " + sim::config::join(allowed));
      const std::string near = sim::config::did_you_mean(it.key(), allowed);
      throw ConfigError(
          p, "unknown " + schema.name() + " field",
          near.empty() ? "calibrations override " + sim::config::join(allowed) : "did you mean \"" + near + "\"?");
    }
    Spec scratch;
    for (const auto& f : schema.fields())
      if (f.key == it.key()) f.set(scratch, *it, p);
  }
}

// Ranges of the calibratable stack fields (the stack schema's own, models/stack/stack_spec.cpp).
struct StackField {
  const char* key;
  double min, max;
  bool duration;
};
constexpr StackField kStackFields[] = {
    {"step_overhead", 0.0, 3600.0, true},
    {"kernels.gemm_scale", 0.05, 2.0, false},
    {"kernels.fp8_gemm_scale", 0.05, 2.0, false},
    {"kernels.hopper_attention_fwd_scale", 0.05, 2.0, false},
    {"kernels.hopper_attention_bwd_scale", 0.05, 2.0, false},
    {"memory.allocator_fragmentation", 0.0, 1.0, false},
};

void check_stack_overrides(const Json& j, const std::string& path) {
  if (!j.is_object())
    throw ConfigError(path, "expected an object mapping stack names to objects of stack fields, got " +
                                sim::config::json_type_name(j));
  for (auto stack = j.begin(); stack != j.end(); ++stack) {
    const std::string sp = child(path, stack.key());
    if (!stack->is_object())
      throw ConfigError(sp, "expected an object of stack fields, e.g. {\"step_overhead\": \"6ms\"}");
    for (auto it = stack->begin(); it != stack->end(); ++it) {
      const std::string p = child(sp, it.key());
      const StackField* field = nullptr;
      for (const auto& f : kStackFields)
        if (it.key() == f.key) field = &f;
      if (field == nullptr) {
        const std::string near = sim::config::did_you_mean(it.key(), calibratable_stack_fields());
        throw ConfigError(p, "is not a calibrated stack constant",
                          near.empty() ? "calibrations override " + sim::config::join(calibratable_stack_fields())
                                       : "did you mean \"" + near + "\"?");
      }
      if (field->duration) {
        if (sim::config::read_time(*it, p).seconds() > field->max)
          throw ConfigError(p, "is over an hour", "give the per-step overhead in seconds or as \"6ms\"");
      } else {
        (void)sim::config::read_number(*it, p, field->min, field->max);
      }
    }
  }
}

Json free_object(const Json& j, const std::string& path) {
  if (!j.is_object()) throw ConfigError(path, "expected an object, got " + sim::config::json_type_name(j));
  return j;
}

Json merged(Json base, const Json& overrides, const Calibration& c) {
  if (!base.contains("sources") || !base.at("sources").is_object()) base["sources"] = Json::object();
  for (auto it = overrides.begin(); it != overrides.end(); ++it) {
    base[it.key()] = *it;
    const auto src = c.sources.find(it.key());
    base["sources"][it.key()] = src != c.sources.end() ? src->second : "calibration \"" + c.name + "\"";
  }
  return base;
}
}  // namespace

const std::vector<std::string>& calibratable_gpu_fields() {
  static const std::vector<std::string> fields = [] {
    std::vector<std::string> out;
    for (const auto& f : gpu_schema().fields())
      if (f.key != "name" && f.key != "description" && f.key != "sources") out.push_back(f.key);
    return out;
  }();
  return fields;
}

const std::vector<std::string>& calibratable_stack_fields() {
  static const std::vector<std::string> fields = [] {
    std::vector<std::string> out;
    for (const auto& f : kStackFields) out.emplace_back(f.key);
    return out;
  }();
  return fields;
}

const std::vector<std::string>& calibratable_cluster_fields() {
  static const std::vector<std::string> fields = {"nvlink_efficiency", "nvlink_latency",    "nic_efficiency",
                                                  "nic_latency",       "collective_launch", "nccl"};
  return fields;
}

const sim::config::Schema<Calibration>& calibration_schema() {
  static const sim::config::Schema<Calibration> schema = [] {
    sim::config::Schema<Calibration> s(
        "calibration",
        "GPU, link and stack constants fitted to measurements on real hardware (`trainsim validate`, "
        "`trainsim kineto`, `trainsim calibrate`), applied over the job's GPU, cluster and stack. Each GPU "
        "and cluster override is checked by the GPU or cluster schema.");
    s.custom("schema_version", "integer", std::string("1"), "Format version; this trainsim reads version 1.",
             [](Calibration& c, const Json& j, const std::string& p) {
               c.schema_version = sim::config::read_int(j, p, 1, sim::config::kUnboundedInt);
               if (c.schema_version != 1)
                 throw ConfigError(p, "unsupported calibration schema version " + std::to_string(c.schema_version),
                                   "this trainsim reads version 1; regenerate it with `trainsim validate`");
             })
        .string("name", &Calibration::name, std::nullopt, "Preset name, e.g. `h100-sxm-80gb-example`.")
        .string("description", &Calibration::description, "", "One line shown by `trainsim list calibrations`.")
        .string("gpu", &Calibration::gpu, std::nullopt,
                "GPU preset the measurements were taken on; a job on another GPU is rejected.")
        .custom("gpu_overrides", "object", "{}",
                "GPU fields set over the job's GPU (any GPU field but `name`, `description` and `sources`).",
                [](Calibration& c, const Json& j, const std::string& p) {
                  check_overrides(j, p, gpu_schema(), calibratable_gpu_fields());
                  c.gpu_overrides = j;
                })
        .custom("cluster_overrides", "object", "{}",
                "Cluster link fields set over the job's cluster: `nvlink_efficiency`, `nvlink_latency`, "
                "`nic_efficiency`, `nic_latency`, `collective_launch`, `nccl` (the whole object).",
                [](Calibration& c, const Json& j, const std::string& p) {
                  check_overrides(j, p, cluster_schema(), calibratable_cluster_fields());
                  c.cluster_overrides = j;
                })
        .custom("stack_overrides", "object", "{}",
                "Per software stack (its name), the stack constants set over it for jobs on that stack: "
                "`step_overhead`, `kernels.gemm_scale`, `kernels.fp8_gemm_scale`, "
                "`kernels.hopper_attention_fwd_scale`, `kernels.hopper_attention_bwd_scale`, "
                "`memory.allocator_fragmentation` (`trainsim calibrate` fits them from logged runs).",
                [](Calibration& c, const Json& j, const std::string& p) {
                  check_stack_overrides(j, p);
                  c.stack_overrides = j;
                })
        .custom("error", "object", "null",
                "Cross-validated relative error of predictions under this calibration: {\"band\": 0.06, "
                "\"runs\": 12, \"method\": \"leave-one-out\"}; `simulate` and `plan` print it as the band "
                "(null: the stack presets' accuracy).",
                [](Calibration& c, const Json& j, const std::string& p) {
                  if (j.is_null()) return;
                  if (!j.is_object()) throw ConfigError(p, "expected an object {band, runs, method}");
                  for (auto it = j.begin(); it != j.end(); ++it)
                    if (it.key() != "band" && it.key() != "runs" && it.key() != "method")
                      throw ConfigError(child(p, it.key()), "unknown key", "use band, runs and method");
                  if (!j.contains("band"))
                    throw ConfigError(child(p, "band"), "is missing", "give the relative error, e.g. 0.06");
                  c.error_band = sim::config::read_number(j.at("band"), child(p, "band"), 0.0, 10.0);
                  if (j.contains("runs"))
                    c.error_runs = sim::config::read_int(j.at("runs"), child(p, "runs"), 0, 1 << 30);
                  if (j.contains("method")) {
                    if (!j.at("method").is_string()) throw ConfigError(child(p, "method"), "expected a string");
                    c.error_method = j.at("method").get<std::string>();
                  }
                })
        .custom("evidence", "object", "{}",
                "What the measurements covered: `stacks`, `precisions`, `clusters`, `gpu_presets` (names), `gpus`, "
                "`params_b`, `seq_len`, and for kernel measurements `gemm_m`, `gemm_n`, `gemm_k`, `message_bytes` "
                "([min, max]), `dense`, `moe` (flags). A job outside (a span more than 2x beyond a range) is "
                "reported as extrapolated, with a wider band.",
                [](Calibration& c, const Json& j, const std::string& p) { c.evidence = stack::parse_evidence(j, p); })
        .custom("provenance", "object", "{}",
                "Where and how it was measured (GPU, driver, CUDA, cuBLAS and NCCL versions, date, command).",
                [](Calibration& c, const Json& j, const std::string& p) { c.provenance = free_object(j, p); })
        .custom("fit", "object", "{}", "How each constant was fitted (records used, residuals).",
                [](Calibration& c, const Json& j, const std::string& p) { c.fit = free_object(j, p); })
        .sources(&Calibration::sources,
                 "Where each overridden constant comes from (field name -> source); replaces the preset's source.");
    return s;
  }();
  return schema;
}

Calibration parse_calibration(const Json& j, const std::string& path) {
  Calibration c;
  calibration_schema().parse(j, path, c);
  // A source for a constant the calibration does not set is a typo or a stale entry.
  std::vector<std::string> overridden;
  for (const Json* o : {&c.gpu_overrides, &c.cluster_overrides})
    for (auto it = o->begin(); it != o->end(); ++it) overridden.push_back(it.key());
  for (auto stack = c.stack_overrides.begin(); stack != c.stack_overrides.end(); ++stack)
    for (auto it = stack->begin(); it != stack->end(); ++it) overridden.push_back(stack.key() + "." + it.key());
  for (const auto& [key, text] : c.sources) {
    if (contains(overridden, key)) continue;
    const std::string near = sim::config::did_you_mean(key, overridden);
    throw ConfigError(child(child(path, "sources"), key), "names no overridden field",
                      near.empty() ? "give sources only for the fields in gpu_overrides and cluster_overrides (and "
                                     "<stack>.<field> for stack_overrides)"
                                   : "did you mean \"" + near + "\"?");
  }
  return c;
}

Json calibrate_gpu_json(const Json& gpu, const Calibration& c) { return merged(gpu, c.gpu_overrides, c); }

Json calibrate_cluster_json(const Json& cluster, const Calibration& c) {
  return merged(cluster, c.cluster_overrides, c);
}

}  // namespace trainsim::models::hardware
