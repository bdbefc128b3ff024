#include "test_support.hpp"

#include "models/presets/catalog.hpp"

namespace trainsim::models::testing {

llm::ModelSpec model(const std::string& preset) {
  return llm::parse_model(presets::find("models", preset, "model"), "model");
}
sim::config::Json model_json(const std::string& preset) { return presets::find("models", preset, "model"); }
hardware::GpuSpec gpu(const std::string& preset) {
  return hardware::parse_gpu(presets::find("gpus", preset, "gpu"), "gpu");
}
hardware::ClusterSpec cluster(const std::string& preset) {
  return hardware::parse_cluster(presets::find("clusters", preset, "cluster"), "cluster");
}
workload::Job job(const sim::config::Json& j) { return workload::resolve_job(workload::parse_job(j)); }

sim::config::Json mini_deepseek(int64_t seq, int64_t mtp_layers) {
  using sim::config::Json;
  return Json{
      {"name", "mini-deepseek"},
      {"layers", 4},
      {"hidden", 1024},
      {"heads", 16},
      {"ffn_hidden", 2816},
      {"vocab", 32000},
      {"seq_len", seq},
      {"activation", "swiglu"},
      {"norm", "rmsnorm"},
      {"position", "rope"},
      {"bias", false},
      {"dropout", false},
      {"mla",
       {{"q_lora_rank", 384},
        {"kv_lora_rank", 256},
        {"qk_nope_head_dim", 64},
        {"qk_rope_head_dim", 32},
        {"v_head_dim", 64}}},
      {"moe",
       {{"experts", 8}, {"top_k", 2}, {"expert_ffn_hidden", 512}, {"shared_experts", 1}, {"first_dense_layers", 1}}},
      {"mtp_layers", mtp_layers}};
}

sim::config::Json gpt(int64_t layers, int64_t hidden, int64_t heads, int64_t vocab, int64_t seq) {
  return sim::config::Json{{"name", "gpt-test"},   {"layers", layers},         {"hidden", hidden}, {"heads", heads},
                           {"kv_heads", nullptr},  {"ffn_hidden", 4 * hidden}, {"vocab", vocab},   {"seq_len", seq},
                           {"activation", "gelu"}, {"norm", "layernorm"}};
}

sim::config::Json with(sim::config::Json base, const sim::config::Json& extra) {
  for (auto it = extra.begin(); it != extra.end(); ++it) base[it.key()] = it.value();
  return base;
}

sim::config::Json ideal_cluster() {
  return sim::config::Json::parse(R"({"name": "ideal", "gpu": "h100-sxm-80gb", "max_gpus": 1024,
      "nvlink_bandwidth": "1000000TBps", "nvlink_efficiency": 1.0, "nvlink_latency": "0ns",
      "nic_bandwidth": "8000000Tbps", "nic_efficiency": 1.0, "nic_latency": "0ns", "collective_launch": "0ns"})");
}

}  // namespace trainsim::models::testing
