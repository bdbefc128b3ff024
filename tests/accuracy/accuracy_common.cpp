#include "accuracy_common.hpp"

#include <cstdlib>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "models/workload/job/job.hpp"

namespace trainsim::accuracy {

std::optional<Json> load_shared(const std::string& file) {
  std::ifstream in(std::string(TRAINSIM_SHARED_DATA_DIR) + "/" + file);
  if (!in) return std::nullopt;
  return Json::parse(in);
}

Json gpt_model(const Json& m) {
  return Json{{"name", m.at("name")},     {"layers", m.at("layers")},
              {"hidden", m.at("hidden")}, {"heads", m.at("heads")},
              {"kv_heads", nullptr},      {"ffn_hidden", m.at("ffn_hidden")},
              {"vocab", m.at("vocab")},   {"seq_len", m.at("seq_len")},
              {"activation", "gelu"},     {"norm", "layernorm"},
              {"position", "learned"},    {"bias", true},
              {"tied_embeddings", true},  {"dropout", true}};
}

std::string preset_for(const Json& m) {
  const int layers = m.at("layers").get<int>();
  const int hidden = m.at("hidden").get<int>();
  if (layers == 96 && hidden == 12288) return "gpt3-175b";
  switch (layers) {
    case 24: return "megatron-1.7b";
    case 30: return "megatron-3.6b";
    case 36: return "megatron-7.5b";
    case 40: return "megatron-18.4b";
    case 48: return "megatron-39.1b";
    case 60: return "megatron-76.1b";
    case 80: return "megatron-145.6b";
    case 96: return "megatron-310.1b";
    case 105: return "megatron-529.6b";
    case 128: return "megatron-1t";
  }
  return "";
}

std::optional<models::workload::SimulationResult> run(const Json& job) {
  // The suites run on the default (flow) network; TRAINSIM_ACCURACY_NETWORK=analytic reruns them
  // on the alpha-beta model for before/after comparisons (docs/accuracy.md).
  Json with_network = job;
  if (const char* n = std::getenv("TRAINSIM_ACCURACY_NETWORK"); n != nullptr && !with_network.contains("network"))
    with_network["network"] = n;
  const auto j = models::workload::resolve_job(models::workload::parse_job(with_network));
  auto r = models::workload::simulate(j);
  if (!r.fits) return std::nullopt;
  return r;
}

Stats stats(const std::vector<Row>& rows) {
  Stats s;
  std::vector<double> abs_e, signed_e;
  for (const auto& r : rows) {
    if (!r.fits) {
      ++s.not_fitting;
      continue;
    }
    abs_e.push_back(std::abs(r.error()));
    signed_e.push_back(r.error());
  }
  s.n = abs_e.size();
  if (abs_e.empty()) return s;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  s.median_abs = median(abs_e);
  s.median_signed = median(signed_e);
  s.max_abs = *std::max_element(abs_e.begin(), abs_e.end());
  return s;
}

void print_table(const std::string& title, const std::vector<Row>& rows, const std::string& unit, size_t max_rows) {
  std::printf("\n%s\n%-44s %-40s %12s %12s %8s\n", title.c_str(), "id", "config", ("measured " + unit).c_str(),
              "predicted", "error");
  size_t shown = 0;
  for (const auto& r : rows) {
    if (shown++ >= max_rows) break;
    if (!r.fits)
      std::printf("%-44s %-40s %12.2f %12s %8s\n", r.id.c_str(), r.config.c_str(), r.measured, "no fit", "-");
    else
      std::printf("%-44s %-40s %12.2f %12.2f %+7.1f%%\n", r.id.c_str(), r.config.c_str(), r.measured, r.predicted,
                  100.0 * r.error());
  }
  if (rows.size() > max_rows) std::printf("... %zu more rows\n", rows.size() - max_rows);
  const Stats s = stats(rows);
  std::printf("%s: n=%zu median |error| %.1f%%, max |error| %.1f%%, median signed %+.1f%%, not fitting %zu\n",
              title.c_str(), s.n, 100 * s.median_abs, 100 * s.max_abs, 100 * s.median_signed, s.not_fitting);
  std::fflush(stdout);
}

}  // namespace trainsim::accuracy
