#include "models/calibration/runs/run_record.hpp"

#include <cmath>

#include "models/calibration/runs/record_job.hpp"
#include "sim/error.hpp"

namespace trainsim::models::calibration {

using sim::config::Json;

namespace {

const Json* measured_value(const Json& m, const char* key) {
  if (!m.contains(key) || m.at(key).is_null()) return nullptr;
  return &m.at(key);
}

double positive(const Json& v, const std::string& path) {
  const double x = sim::config::read_number(v, path, 0.0, 1e15);
  if (!(x > 0.0)) throw ConfigError(path, "must be positive", "give the measured value, or drop the run");
  return x;
}

bool counts_recompute(const Json& m) {
  if (!m.contains("flops_accounting") || !m.at("flops_accounting").is_string()) return false;
  return m.at("flops_accounting").get<std::string>().find("recomput") != std::string::npos;
}

// Fills the metric from `measured`: tokens/s per GPU first, then iteration time, model TFLOP/s, MFU.
void read_measured(const Json& rec, const std::string& path, RunRecord& r) {
  if (!rec.contains("measured") || !rec.at("measured").is_object())
    throw ConfigError(path + ".measured", "is missing",
                      "give measured.tokens_per_s_per_gpu, iteration_s, model_tflops_per_gpu or mfu");
  const Json& m = rec.at("measured");
  const std::string at = path + ".measured.";
  if (const Json* v = measured_value(m, "tokens_per_s_per_gpu")) {
    r.metric = RunMetric::kTokensPerGpu;
    r.measured = positive(*v, at + "tokens_per_s_per_gpu");
  } else if (const Json* s = measured_value(m, "iteration_s")) {
    r.metric = RunMetric::kIterationTime;
    r.measured = positive(*s, at + "iteration_s");
  } else if (const Json* ms = measured_value(m, "iteration_ms")) {
    r.metric = RunMetric::kIterationTime;
    r.measured = positive(*ms, at + "iteration_ms") / 1e3;
  } else if (const Json* t = measured_value(m, "model_tflops_per_gpu") != nullptr
                                 ? measured_value(m, "model_tflops_per_gpu")
                                 : measured_value(m, "tflops_per_gpu")) {
    r.metric = RunMetric::kModelTflops;
    r.measured =
        positive(*t, at + (measured_value(m, "model_tflops_per_gpu") ? "model_tflops_per_gpu" : "tflops_per_gpu"));
    if (counts_recompute(m) && r.job.value("recompute", "") == "full") {
      r.flops_factor = 4.0 / 3.0;
      r.assumptions.push_back("TFLOP/s count the recomputed forward (x4/3)");
    }
  } else if (const Json* u = measured_value(m, "mfu")) {
    r.metric = RunMetric::kMfu;
    r.measured = positive(*u, at + "mfu");
    if (r.measured > 1.0) r.measured /= 100.0;  // given in percent
  } else {
    throw ConfigError(path + ".measured", "has no quantity trainsim compares",
                      "give tokens_per_s_per_gpu, iteration_s, model_tflops_per_gpu or mfu, or pass --skip-unusable");
  }
  if (const Json* p = measured_value(m, "peak_memory_gib")) r.peak_memory_gib = positive(*p, at + "peak_memory_gib");
}

void merge(Json& into, const Json& over) {
  for (auto it = over.begin(); it != over.end(); ++it) into[it.key()] = *it;
}

}  // namespace

const char* to_string(RunMetric m) {
  switch (m) {
    case RunMetric::kTokensPerGpu: return "tokens/s per GPU";
    case RunMetric::kIterationTime: return "iteration s";
    case RunMetric::kModelTflops: return "model TFLOP/s per GPU";
    case RunMetric::kMfu: return "MFU";
  }
  return "?";
}

RunFile read_runs(const Json& file, const RunDefaults& defaults, const std::string& path) {
  Json records, file_defaults = Json::object();
  std::string rpath = path;
  if (file.is_array()) {
    records = file;
  } else if (file.is_object() && (file.contains("runs") || file.contains("records"))) {
    // {"meta": ..., "records": [...]}: the shared data's single-node file keeps its runs there.
    const char* key = file.contains("runs") ? "runs" : "records";
    for (auto it = file.begin(); it != file.end(); ++it)
      if (it.key() != key && it.key() != "defaults" && it.key() != "meta")
        throw ConfigError(path + "." + it.key(), "unknown key", "a run file holds \"defaults\" and \"runs\"");
    records = file.at(key);
    rpath = path + "." + key;
    if (file.contains("defaults")) {
      if (!file.at("defaults").is_object())
        throw ConfigError(path + ".defaults", "expected an object of job keys", "e.g. {\"stack\": \"nemo-24.07\"}");
      file_defaults = file.at("defaults");
    }
    if (!records.is_array()) throw ConfigError(rpath, "expected an array of run records");
  } else {
    throw ConfigError(path, "expected an array of run records or {\"defaults\": {...}, \"runs\": [...]}",
                      "see docs/calibration.md, Run files");
  }
  Json job_defaults = file_defaults;
  merge(job_defaults, defaults.job);
  RunFile out;
  for (size_t i = 0; i < records.size(); ++i) {
    const Json& rec = records[i];
    const std::string at = rpath + "[" + std::to_string(i) + "]";
    RunRecord r;
    r.path = at;
    r.id = rec.is_object() && rec.contains("id") && rec.at("id").is_string() ? rec.at("id").get<std::string>()
                                                                             : "runs[" + std::to_string(i) + "]";
    r.source = rec.is_object() && rec.contains("source") && rec.at("source").is_string()
                   ? rec.at("source").get<std::string>()
                   : "";
    if (!defaults.only.empty() && r.id.find(defaults.only) == std::string::npos &&
        r.source.find(defaults.only) == std::string::npos)
      continue;
    try {
      r.job = record_job(rec, job_defaults, at, r.assumptions);
      merge(r.job, job_defaults);
      if (rec.contains("job")) {
        if (!rec.at("job").is_object())
          throw ConfigError(at + ".job", "expected an object of trainsim job keys", "e.g. {\"zero\": 1}");
        merge(r.job, rec.at("job"));
      }
      read_measured(rec, at, r);
    } catch (const ConfigError& e) {
      if (!defaults.skip_unusable) throw;
      out.skipped.push_back(at + " (" + r.id + "): " + e.path() + ": " + e.message());
      continue;
    }
    out.runs.push_back(std::move(r));
  }
  if (out.runs.empty())
    throw ConfigError(rpath,
                      defaults.only.empty() ? "holds no usable run" : "holds no run matching \"" + defaults.only + "\"",
                      "give at least one run with a measured quantity");
  return out;
}

double predicted_metric(const RunRecord& run, double tokens_per_s_per_gpu, double iteration_s,
                        double model_tflops_per_gpu, double mfu) {
  switch (run.metric) {
    case RunMetric::kTokensPerGpu: return tokens_per_s_per_gpu;
    case RunMetric::kIterationTime: return iteration_s;
    case RunMetric::kModelTflops: return model_tflops_per_gpu * run.flops_factor;
    case RunMetric::kMfu: return mfu;
  }
  return 0.0;
}

double throughput_error(const RunRecord& run, double predicted) {
  if (run.metric == RunMetric::kIterationTime) return run.measured / predicted - 1.0;
  return predicted / run.measured - 1.0;
}

}  // namespace trainsim::models::calibration
