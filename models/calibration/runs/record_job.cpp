#include "models/calibration/runs/record_job.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

#include "models/presets/catalog.hpp"
#include "sim/error.hpp"

namespace trainsim::models::calibration {

using sim::config::Json;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool has(const std::string& text, const char* word) { return text.find(word) != std::string::npos; }

// The value of `key` in `obj` when present and not null.
const Json* field(const Json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || obj.at(key).is_null()) return nullptr;
  return &obj.at(key);
}

int64_t read_count(const Json& obj, const char* key, const std::string& path, int64_t fallback) {
  const Json* v = field(obj, key);
  if (v == nullptr) return fallback;
  return sim::config::read_int(*v, path + "." + key, 1, 1 << 30);
}

std::string text_of(const Json& obj, const char* key) {
  const Json* v = field(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : "";
}

// Whether a model preset has the record's shape (fields the record leaves null are not compared).
bool same_shape(const Json& preset, const Json& m) {
  for (const char* k : {"layers", "hidden", "heads", "vocab"}) {
    const Json* v = field(m, k);
    if (v != nullptr && (!preset.contains(k) || preset.at(k) != *v)) return false;
  }
  const Json* moe = field(m, "moe");
  const bool preset_moe = preset.contains("moe") && !preset.at("moe").is_null();
  if ((moe != nullptr) != preset_moe) return false;
  if (moe == nullptr) {
    const Json* f = field(m, "ffn_hidden");
    return f == nullptr || preset.at("ffn_hidden") == *f;
  }
  const Json& pm = preset.at("moe");
  const Json* e = field(*moe, "experts");
  const Json* k = field(*moe, "topk") != nullptr ? field(*moe, "topk") : field(*moe, "top_k");
  return (e == nullptr || pm.at("experts") == *e) && (k == nullptr || pm.at("top_k") == *k);
}

// The conventions a model name implies: GPT (GeLU, learned positions, biases), Nemotron (squared
// ReLU, LayerNorm, RoPE), or Llama-like (the rest).
std::string family_of_name(const std::string& name) {
  const std::string n = lower(name);
  if (n.rfind("gpt", 0) == 0 || n.rfind("megatron", 0) == 0) return "gpt";
  if (n.rfind("nemotron", 0) == 0) return "nemotron";
  return "llama";
}

std::string family_of_preset(const Json& p) {
  if (p.value("position", "") == "learned") return "gpt";
  return p.value("activation", "") == "swiglu" ? "llama" : "other";
}

Json model_from_shape(const Json& m, const std::string& path, std::vector<std::string>& assumptions) {
  const std::string name = text_of(m, "name");
  const bool gpt = family_of_name(name) == "gpt", nemotron = family_of_name(name) == "nemotron";
  Json out{{"name", name.empty() ? "model" : name}};
  for (const char* k : {"layers", "hidden", "heads", "ffn_hidden", "seq_len"}) {
    const Json* v = field(m, k);
    if (v == nullptr)
      throw ConfigError(path + "." + k, "is missing and no model preset has this shape",
                        "give the model's " + std::string(k) + ", or a trainsim model in the record's job.model");
    out[k] = *v;
  }
  out["kv_heads"] = field(m, "kv_heads") != nullptr ? m.at("kv_heads") : Json(nullptr);
  if (const Json* v = field(m, "vocab"); v != nullptr) {
    out["vocab"] = *v;
  } else {
    out["vocab"] = gpt ? 50304 : (nemotron ? 256000 : 32000);
    assumptions.push_back("vocab " + out["vocab"].dump() + " (not given)");
  }
  out["activation"] = gpt || nemotron ? "gelu" : "swiglu";
  out["norm"] = gpt || nemotron ? "layernorm" : "rmsnorm";
  out["position"] = gpt ? "learned" : "rope";
  out["bias"] = gpt;
  out["tied_embeddings"] = gpt;
  out["dropout"] = gpt;
  assumptions.push_back(std::string("model built from its shape with ") +
                        (gpt        ? "GPT"
                         : nemotron ? "Nemotron"
                                    : "Llama") +
                        " conventions");
  if (const Json* moe = field(m, "moe"); moe != nullptr) {
    Json o{{"experts", field(*moe, "experts") != nullptr ? moe->at("experts") : Json(nullptr)}};
    const Json* k = field(*moe, "topk") != nullptr ? field(*moe, "topk") : field(*moe, "top_k");
    o["top_k"] = k != nullptr ? *k : Json(nullptr);
    const Json* f = field(*moe, "moe_ffn_hidden") != nullptr ? field(*moe, "moe_ffn_hidden") : field(m, "ffn_hidden");
    o["expert_ffn_hidden"] = f != nullptr ? *f : Json(nullptr);
    if (const Json* s = field(*moe, "shared_experts"); s != nullptr) o["shared_experts"] = *s;
    if (const Json* d = field(*moe, "first_k_dense"); d != nullptr) o["first_dense_layers"] = *d;
    for (const char* key : {"experts", "top_k", "expert_ffn_hidden"})
      if (o.at(key).is_null())
        throw ConfigError(path + ".moe." + key, "is missing", "give the MoE layer's experts, topk and moe_ffn_hidden");
    out["moe"] = o;
  }
  return out;
}

Json model_of(const Json& m, const std::string& path, std::vector<std::string>& assumptions) {
  if (!m.is_object()) throw ConfigError(path, "expected the model object (name, layers, hidden, heads, ...)");
  std::vector<std::string> matches;
  Json match;
  const std::string family = family_of_name(text_of(m, "name"));
  for (const auto& e : presets::list("models")) {
    const Json p = presets::find("models", e.name, path);
    if (!same_shape(p, m) || family_of_preset(p) != family) continue;
    matches.push_back(e.name);
    if (match.is_null()) match = p;
  }
  if (matches.empty()) return model_from_shape(m, path, assumptions);
  if (const Json* s = field(m, "seq_len"); s != nullptr) match["seq_len"] = *s;
  assumptions.push_back("model preset " + matches.front() + " (same shape)");
  return match;
}

// The record's `precision` text, else float8, else the defaults'.
std::string precision_of(const Json& rec, const Json& parallel, const Json& defaults, const std::string& path) {
  const std::string text = text_of(rec, "precision");
  if (std::string p = precision_for(text); !p.empty()) return p;
  if (const Json* f = field(parallel, "float8"); f != nullptr && f->is_boolean() && f->get<bool>()) return "fp8";
  if (defaults.contains("precision")) return "";  // the defaults give it
  if (text.empty() || has(lower(text), "not stated") || has(lower(text), "mixed"))
    throw ConfigError(path + ".precision", "does not say the precision" + (text.empty() ? "" : " (\"" + text + "\")"),
                      "pass --precision bf16|fp16|fp8|mxfp8|nvfp4, or set it in the record");
  throw ConfigError(path + ".precision", "\"" + text + "\" names no precision trainsim knows",
                    "write bf16, fp16, fp8, mxfp8 or nvfp4, or pass --precision");
}

void parallel_keys(const Json& p, const std::string& path, Json& job, std::vector<std::string>& assumptions) {
  const std::string at = path + ".parallel";
  const int64_t tp = read_count(p, "tp", at, 1), pp = read_count(p, "pp", at, 1), cp = read_count(p, "cp", at, 1);
  job["tp"] = tp;
  job["pp"] = pp;
  job["cp"] = cp;
  if (const int64_t ep = read_count(p, "ep", at, 1); ep > 1) {
    job["ep"] = ep;
    job["etp"] = read_count(p, "etp", at, 1);
  }
  if (const int64_t vp = read_count(p, "vp", at, 1); vp > 1) {
    job["vp"] = vp;
    job["schedule"] = "interleaved";
  }
  const int64_t mb = read_count(p, "micro_batch", at, 0);
  job["micro_batch"] = mb > 0 ? mb : 1;
  if (mb == 0) assumptions.push_back("micro-batch 1 (not given)");
  if (const Json* g = field(p, "global_batch"); g != nullptr) {
    job["global_batch"] = sim::config::read_int(*g, at + ".global_batch", 1, int64_t{1} << 40);
  } else if (field(p, "grad_accum") != nullptr && field(p, "dp") != nullptr) {
    job["global_batch"] =
        job["micro_batch"].get<int64_t>() * read_count(p, "grad_accum", at, 1) * read_count(p, "dp", at, 1);
  } else {
    throw ConfigError(at + ".global_batch", "is missing", "give the global batch in sequences");
  }
  const std::string ac = lower(text_of(p, "recompute"));
  if (ac == "full")
    job["recompute"] = "full";
  else if (ac.rfind("selective", 0) == 0)
    job["recompute"] = "selective";
  else if (ac == "none")
    job["recompute"] = "none";
  const Json* fsdp = field(p, "fsdp");
  const bool sharded = (fsdp != nullptr && fsdp->is_number() && fsdp->get<double>() > 1) ||
                       (field(p, "zero") != nullptr && p.at("zero").is_number() && p.at("zero").get<int>() == 3);
  if (sharded)
    job["zero"] = 3;
  else if (const Json* z = field(p, "zero"); z != nullptr && z->is_number())
    job["zero"] = *z;
  if (const Json* c = field(p, "torch_compile"); c != nullptr && c->is_boolean() && c->get<bool>())
    job["torch_compile"] = true;
}

}  // namespace

ClusterGuess cluster_for(const std::string& gpu_text) {
  const std::string t = lower(gpu_text);
  const bool gb96 = has(t, "96gb") || has(t, "96 gb"), gb40 = has(t, "40gb") || has(t, "40 gb");
  if (has(t, "gb300")) return {"gb300-nvl72", ""};
  if (has(t, "gb200")) return {"gb200-nvl72", ""};
  if (has(t, "b300")) return {"dgx-b300", ""};
  if (has(t, "b200")) return {"dgx-b200", ""};
  if (has(t, "h800")) return {"dgx-h800", ""};
  if (has(t, "h200")) return {"dgx-h200", ""};
  if (has(t, "h100")) return {"dgx-h100", gb96 ? "h100-sxm-96gb" : ""};
  if (has(t, "a100")) return {"dgx-a100", gb40 ? "a100-sxm-40gb" : ""};
  return {};
}

std::string stack_for(const std::string& framework) {
  const std::string t = lower(framework);
  if (has(t, "torchtitan")) return "torchtitan";
  if (has(t, "megatron-bridge") || has(t, "megatron bridge")) return "megatron-bridge-2025";
  static const std::regex nemo(R"(nemo[^0-9]*([0-9]{2})\.)");
  if (std::smatch m; std::regex_search(t, m, nemo))
    return std::stoi(m[1]) >= 25 ? "megatron-bridge-2025" : "nemo-24.07";
  if (has(t, "deepspeed")) return "deepspeed";
  static const std::regex mcore(R"((megatron-core|mcore)[^0-9]*v?0\.([0-9]+))");
  if (std::smatch m; std::regex_search(t, m, mcore))
    return std::stoi(m[2]) < 10 ? "megatron-core-2024" : "megatron-core-2025";
  if (has(t, "megatron-core") || has(t, "mcore")) return "megatron-core-2025";
  if (has(t, "nemo")) return "nemo-24.07";
  if (has(t, "megatron")) {
    static const std::regex year(R"(20(2[3-9]))");
    return std::regex_search(t, year) ? "megatron-lm-2023" : "megatron-lm-2021";
  }
  return "";
}

std::string precision_for(const std::string& text) {
  const std::string t = lower(text);
  if (has(t, "nvfp4")) return "nvfp4";
  if (has(t, "mxfp8") || has(t, "fp8-mx") || has(t, "fp8 mx")) return "mxfp8";
  if (has(t, "fp8")) return "fp8";
  if (has(t, "bf16") || has(t, "bfloat16")) return "bf16";
  if (has(t, "fp16") || has(t, "float16")) return "fp16";
  return "";
}

Json record_job(const Json& rec, const Json& defaults, const std::string& path, std::vector<std::string>& assumptions) {
  if (!rec.is_object())
    throw ConfigError(path, "expected a run record object, got " + sim::config::json_type_name(rec));
  Json job = Json::object();
  const bool given_model = defaults.contains("model") || (rec.contains("job") && rec.at("job").contains("model"));
  if (!given_model) {
    if (!rec.contains("model")) throw ConfigError(path + ".model", "is missing", "give the model's shape");
    job["model"] = model_of(rec.at("model"), path + ".model", assumptions);
  }
  const Json cluster = rec.contains("cluster") ? rec.at("cluster") : Json::object();
  if (const Json* g = field(cluster, "gpus"); g != nullptr) {
    job["gpus"] = sim::config::read_int(*g, path + ".cluster.gpus", 1, 1 << 24);
  } else if (!defaults.contains("gpus")) {
    throw ConfigError(path + ".cluster.gpus", "is missing", "give the number of GPUs the run used");
  }
  if (!defaults.contains("cluster")) {
    const std::string gpu = text_of(cluster, "gpu");
    const ClusterGuess c = cluster_for(gpu);
    if (c.cluster.empty())
      throw ConfigError(path + ".cluster.gpu",
                        gpu.empty() ? "is missing" : "\"" + gpu + "\" names no GPU trainsim has a cluster for",
                        "pass --cluster NAME (`trainsim list clusters` lists them), or name A100, H100, H200, "
                        "H800, B200, B300, GB200 or GB300");
    job["cluster"] = c.cluster;
    if (!c.gpu.empty() && !defaults.contains("gpu")) job["gpu"] = c.gpu;
  }
  if (!defaults.contains("stack")) {
    const std::string fw = text_of(rec, "framework");
    const std::string s = stack_for(fw);
    if (s.empty())
      throw ConfigError(path + ".framework",
                        fw.empty() ? "is missing" : "\"" + fw + "\" names no software stack trainsim has",
                        "pass --stack NAME; `trainsim list stacks` lists them");
    job["stack"] = s;
  }
  const Json parallel = rec.contains("parallel") ? rec.at("parallel") : Json::object();
  if (const std::string p = precision_of(rec, parallel, defaults, path); !p.empty()) job["precision"] = p;
  parallel_keys(parallel, path, job, assumptions);
  return job;
}

}  // namespace trainsim::models::calibration
