#include "accuracy_common.hpp"

#include <cstdlib>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "models/calibration/runs/run_fit.hpp"
#include "models/presets/catalog.hpp"
#include "models/stack/evidence.hpp"
#include "models/stack/stack_spec.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/job/prediction_band.hpp"

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
  // TRAINSIM_ACCURACY_JOBS=DIR writes each row's job as DIR/<id>.json, for `trainsim simulate` on one row.
  if (const char* dir = std::getenv("TRAINSIM_ACCURACY_JOBS"); dir != nullptr)
    for (const auto& r : rows)
      if (!r.job.is_null()) std::ofstream(std::string(dir) + "/" + r.id + ".json") << r.job.dump(2) << "\n";
  const Stats s = stats(rows);
  std::printf("%s: n=%zu median |error| %.1f%%, max |error| %.1f%%, median signed %+.1f%%, not fitting %zu\n",
              title.c_str(), s.n, 100 * s.median_abs, 100 * s.max_abs, 100 * s.median_signed, s.not_fitting);
  std::fflush(stdout);
}

void expect_stack_accuracy(const std::string& stack_name, const std::string& source, const std::vector<Row>& rows) {
  std::vector<double> errors;
  std::vector<models::workload::Job> jobs;
  for (const auto& r : rows) {
    if (!r.fits || r.job.is_null()) continue;
    errors.push_back(r.error());
    jobs.push_back(models::workload::resolve_job(models::workload::parse_job(r.job)));
  }
  ASSERT_FALSE(errors.empty()) << "no fitting row carries its job";
  // A stack's entry names the GPUs it covers; the stack is its own, and any cluster of them.
  models::stack::Evidence e = models::workload::evidence_of(jobs);
  e.stacks.clear();
  e.clusters.clear();
  const double band = models::stack::error_band(errors);
  const Json want{{"band", std::round(band * 1000.0) / 1000.0},
                  {"runs", static_cast<int64_t>(errors.size())},
                  {"source", source + " ..."},
                  {"evidence", models::stack::to_json(e)}};
  const auto spec =
      models::stack::parse_stack(models::presets::find("stacks", stack_name, "stack"), "stack " + stack_name);
  const models::stack::StackAccuracy* entry = nullptr;
  for (const auto& a : spec.accuracy)
    if (a.source.rfind(source, 0) == 0) entry = &a;
  ASSERT_NE(entry, nullptr) << "models/presets/stacks/" << stack_name << ".json has no accuracy entry for \"" << source
                            << "\"; add " << want.dump();
  EXPECT_NEAR(entry->band, band, 0.01) << "update its band: " << want.dump();
  EXPECT_EQ(entry->runs, static_cast<int64_t>(errors.size())) << want.dump();
  EXPECT_EQ(models::stack::to_json(entry->evidence), models::stack::to_json(e))
      << "update its evidence: " << want.dump();
}

bool slow_calibrations() {
  const char* v = std::getenv("TRAINSIM_ACCURACY_CALIBRATE");
  return v != nullptr && std::string(v) == "all";
}

CalibrationStats calibrate_rows(const std::string& title, const std::vector<Row>& rows,
                                models::calibration::RunMetric metric, double scale, const std::vector<Row>* peaks) {
  std::vector<models::calibration::RunRecord> runs;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].job.is_null()) continue;
    models::calibration::RunRecord r;
    r.id = rows[i].id;
    r.path = cat("rows[", i, "]");
    r.job = rows[i].job;
    r.metric = metric;
    r.measured = rows[i].measured * scale;
    if (peaks)
      for (const Row& p : *peaks)
        if (p.id == r.id) r.peak_memory_gib = p.measured;
    runs.push_back(std::move(r));
  }
  models::calibration::RunFitOptions o;
  o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto t0 = std::chrono::steady_clock::now();
  const models::calibration::RunFitResult fit = models::calibration::fit_runs(runs, o);
  CalibrationStats s;
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.runs = runs.size();
  s.used = fit.used;
  s.simulations = fit.simulations;
  s.before = fit.median_before;
  s.after = fit.median_after;
  s.cv = fit.median_cv;
  s.band = fit.band;
  s.constant_mfu = fit.median_constant_mfu;
  std::string fitted;
  for (const auto& c : fit.constants)
    if (c.fitted) {
      ++s.fitted;
      fitted += cat(fitted.empty() ? "" : ", ", c.param.label(), " ", c.param.prior, " -> ", c.value);
    }
  std::printf(
      "%s, trainsim calibrate: %zu runs (%zu fit), median |error| %.1f%% before, %.1f%% after, %.1f%% "
      "leave-one-out (constant-MFU baseline %.1f%%), band %.1f%%; fitted: %s; %zu simulations in %.1f s\n",
      title.c_str(), s.runs, s.used, 100 * s.before, 100 * s.after, 100 * s.cv, 100 * s.constant_mfu, 100 * s.band,
      fitted.empty() ? "nothing" : fitted.c_str(), s.simulations, s.seconds);
  for (const auto& m : fit.memory) {
    s.peak_runs += m.runs.size();
    s.peak_before = m.median_before, s.peak_after = m.median_after, s.peak_cv = m.median_cv;
    std::printf(
        "  peak memory (%s, %zu runs): allocator reserve %.3g -> %s, median |error| %.1f%% before, %.1f%% "
        "after, %.1f%% leave-one-out%s%s\n",
        m.stack.c_str(), m.runs.size(), m.prior, m.fitted ? cat(m.value).c_str() : "kept", 100 * m.median_before,
        100 * m.median_after, 100 * m.median_cv, m.note.empty() ? "" : "; ", m.note.c_str());
  }
  std::fflush(stdout);
  return s;
}

}  // namespace trainsim::accuracy
