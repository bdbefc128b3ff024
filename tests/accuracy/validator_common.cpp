#include "validator_common.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "models/presets/catalog.hpp"

namespace trainsim::accuracy {

models::workload::Job validator_job(const sim::config::Json& spec) {
  return models::workload::resolve_job(models::workload::parse_job(spec));
}

models::calibration::MeasurementSet validator_measurements(const std::string& file) {
  const std::string path = std::string(TRAINSIM_ACCURACY_DATA_DIR) + "/" + file + ".measurements.json";
  return models::calibration::measurements_from_json(models::presets::load_json_file(path, path), path);
}

double validator_error(const validator::Report& r, models::calibration::OpKind kind, bool after) {
  for (const auto& row : r.rows)
    if (row.kind == kind) return after ? row.error_after() : row.error_before();
  return NAN;
}

const validator::ReportRow* print_validator_report(const validator::Report& report) {
  std::printf("%-26s %-14s %12s %12s %8s %12s %8s\n", "op", "kind", "measured us", "before us", "error", "after us",
              "error");
  const validator::ReportRow* layer = nullptr;
  for (const auto& r : report.rows) {
    if (std::isnan(r.before_s)) continue;
    std::printf("%-26s %-14s %12.1f %12.1f %+7.1f%% %12.1f %+7.1f%%\n", r.name.c_str(),
                models::calibration::to_string(r.kind), r.measured_s * 1e6, r.before_s * 1e6, 100 * r.error_before(),
                r.after_s * 1e6, 100 * r.error_after());
    if (r.kind == models::calibration::OpKind::kLayer) layer = &r;
  }
  for (const auto& k : report.kinds)
    std::printf("%-14s %3d ops  |error| before median %.1f%% max %.1f%%, after median %.1f%% max %.1f%%\n",
                models::calibration::to_string(k.kind), k.count, 100 * k.median_abs_before, 100 * k.max_abs_before,
                100 * k.median_abs_after, 100 * k.max_abs_after);
  return layer;
}

void expect_cross_cases(const std::vector<CrossCase>& cases, const std::string& calibration) {
  std::printf("%-24s %-10s %8s %22s\n", "measurements", "record", "preset", calibration.c_str());
  for (const CrossCase& c : cases) {
    const auto set = validator_measurements(c.file);
    const auto preset = validator_job(c.job);
    sim::config::Json cj = c.job;
    cj["calibration"] = calibration;
    const auto calibrated = validator_job(cj);
    const auto before = validator::make_report(set, preset, preset.gpu, preset.cluster, preset.gpu, preset.cluster);
    const auto after =
        validator::make_report(set, calibrated, calibrated.gpu, calibrated.cluster, calibrated.gpu, calibrated.cluster);
    const double e0 = validator_error(before, c.kind, false), e1 = validator_error(after, c.kind, false);
    std::printf("%-24s %-10s %+7.1f%% %+21.1f%%\n", c.file, models::calibration::to_string(c.kind), 100 * e0, 100 * e1);
    EXPECT_NEAR(e0, c.preset_seen, 0.005) << c.file;
    EXPECT_NEAR(e1, c.calibrated_seen, 0.005) << c.file;
    EXPECT_LT(std::abs(e1), c.bound) << c.file;
  }
}

}  // namespace trainsim::accuracy
