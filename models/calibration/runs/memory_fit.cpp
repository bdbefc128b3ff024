#include "models/calibration/runs/memory_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "models/calibration/measurement.hpp"

namespace trainsim::models::calibration {

namespace {

constexpr double kMaxReserve = 1.0;  // stack schema's range of allocator_fragmentation

// The reserve that reproduces the run's measured peak (formula in memory_fit.hpp); NaN when no
// stage has reservable memory (nothing the reserve scales).
double implied_reserve(const MemoryRun& r) {
  if (r.measured_gib <= 0) return std::numeric_limits<double>::quiet_NaN();
  double f = std::numeric_limits<double>::infinity();
  for (const auto& s : r.stages)
    if (s.reservable_gib > 0) f = std::min(f, (r.measured_gib - s.fixed_gib) / s.reservable_gib);
  return std::isfinite(f) ? std::clamp(f, 0.0, kMaxReserve) : std::numeric_limits<double>::quiet_NaN();
}

double round4(double v) { return std::round(v * 1e4) / 1e4; }

// The largest reserve under which every stage of the run fits its capacity (it ran, so it did);
// infinity when the run has no capacity or nothing reservable.
double largest_reserve(const MemoryRun& r) {
  double f = std::numeric_limits<double>::infinity();
  if (r.capacity_gib <= 0) return f;
  for (const auto& s : r.stages)
    if (s.reservable_gib > 0) f = std::min(f, (r.capacity_gib - s.fixed_gib) / s.reservable_gib);
  return f;
}

}  // namespace

double peak_gib(const std::vector<StagePeak>& stages, double f) {
  double peak = 0;
  for (const auto& s : stages) peak = std::max(peak, s.fixed_gib + f * s.reservable_gib);
  return peak;
}

std::vector<MemoryFit> fit_memory(const std::vector<MemoryRun>& runs) {
  std::map<std::string, std::vector<size_t>> by_stack;
  for (size_t i = 0; i < runs.size(); ++i) by_stack[runs[i].stack].push_back(i);
  std::vector<MemoryFit> out;
  for (const auto& [stack, idx] : by_stack) {
    MemoryFit f;
    f.stack = stack;
    f.prior = f.value = runs[idx.front()].prior;
    std::vector<double> implied;
    for (size_t i : idx) {
      const double x = implied_reserve(runs[i]);
      if (std::isnan(x)) continue;
      f.runs.push_back(i);
      implied.push_back(x);
    }
    const auto error = [&](size_t i, double reserve) {
      return peak_gib(runs[i].stages, reserve) / runs[i].measured_gib - 1.0;
    };
    if (f.runs.empty()) continue;  // no run of the stack logs a peak the reserve changes
    for (size_t i : f.runs) f.error_before.push_back(error(i, runs[i].prior));
    f.median_before = median_abs(f.error_before);
    if (f.runs.size() < 2) {
      f.note = "kept: one run, nothing to cross-validate";
      f.error_after = f.error_cv = f.error_before;
      f.median_after = f.median_cv = f.median_before;
      out.push_back(std::move(f));
      continue;
    }
    // Every run of the stack ran, logged peak or not: no reserve may make one of them not fit.
    double cap = kMaxReserve;
    size_t tightest = idx.front();
    // (A run that fits at no reserve is off for another reason: it sets no cap.)
    for (size_t i : idx)
      if (const double c = largest_reserve(runs[i]); c >= 0 && c < cap) cap = c, tightest = i;
    const auto capped = [cap](double x) { return std::min(x, cap); };
    const double fitted = capped(median(implied));
    for (size_t r = 0; r < f.runs.size(); ++r) {
      std::vector<double> others = implied;
      others.erase(others.begin() + static_cast<std::ptrdiff_t>(r));
      f.error_after.push_back(error(f.runs[r], fitted));
      f.error_cv.push_back(error(f.runs[r], capped(median(others))));
    }
    if (fitted < median(implied)) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "capped at %.4g: a larger reserve would leave a run that ran without memory", cap);
      f.note = buf;
      f.capped_by = static_cast<int64_t>(tightest);
    }
    f.median_after = median_abs(f.error_after);
    f.median_cv = median_abs(f.error_cv);
    if (f.median_cv < f.median_before) {
      f.fitted = true;
      f.value = fitted;
    } else {
      f.note.clear();
      f.capped_by = -1;
      f.note = "kept: the leave-one-out error is not below the presets'";
      f.error_after = f.error_before;
      f.median_after = f.median_before;
    }
    out.push_back(std::move(f));
  }
  return out;
}

void write_memory_fit(sim::config::Json& calibration, const std::vector<MemoryFit>& fits,
                      const std::vector<std::string>& run_ids) {
  using sim::config::Json;
  Json all = Json::array();
  for (const MemoryFit& f : fits) {
    if (f.fitted) {
      const std::string key = "memory.allocator_fragmentation";
      calibration["stack_overrides"][f.stack][key] = round4(f.value);
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "trainsim calibrate: the median reserve reproducing the peak memory of %zu runs (prior %.4g); "
                    "leave-one-out median error %.1f%% (%.1f%% with the prior)",
                    f.runs.size(), f.prior, 100.0 * f.median_cv, 100.0 * f.median_before);
      calibration["sources"][f.stack + "." + key] = buf;
    }
    Json runs = Json::array();
    for (size_t r = 0; r < f.runs.size(); ++r)
      runs.push_back(Json{{"id", run_ids.at(f.runs[r])},
                          {"error_before", round4(f.error_before[r])},
                          {"error_after", round4(f.error_after[r])},
                          {"error_cv", round4(f.error_cv[r])}});
    all.push_back(Json{{"stack", f.stack},
                       {"constant", "memory.allocator_fragmentation"},
                       {"prior", f.prior},
                       {"value", round4(f.value)},
                       {"fitted", f.fitted},
                       {"note", f.note},
                       {"median_error_before", round4(f.median_before)},
                       {"median_error_after", round4(f.median_after)},
                       {"median_error_cv", round4(f.median_cv)},
                       {"runs", runs}});
    if (f.capped_by >= 0) all.back()["capped_by"] = run_ids.at(static_cast<size_t>(f.capped_by));
  }
  if (!all.empty()) calibration["fit"]["memory"] = all;
}

}  // namespace trainsim::models::calibration
