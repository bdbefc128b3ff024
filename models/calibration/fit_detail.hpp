#pragma once
// The fit's internals shared by fit.cpp (launch, HBM, attention, collectives) and fit_gemm.cpp
// (the GEMM constants and their grid search): the state its phases share and the least-squares
// helpers. Not part of the API (models/calibration/fit.hpp is).

#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "models/calibration/fit.hpp"

namespace trainsim::models::calibration::detail {

// The schema ranges of the fitted fields (gpu_spec.cpp, cluster_spec.cpp).
constexpr double kMinEfficiency = 0.05, kMaxEfficiency = 1.0;

// What the fit's phases share: the inputs, the result they fill in, and the kernel launch time.
struct FitState {
  const MeasurementSet& ms;
  const models::hardware::GpuSpec& prior;
  const models::hardware::ClusterSpec* prior_cluster;  // null: the collectives are not fitted
  FitResult& r;                                        // r.gpu / r.cluster: the prior, fitted phase by phase
  double launch0 = 0.0;                                // the prior's kernel launch, seconds
  double launch = 0.0;                                 // the fitted kernel launch, seconds (launch0 until fitted)

  // The records of the given kinds, in file order.
  std::vector<const Measurement*> of_kind(std::initializer_list<OpKind> kinds) const;
};

// Fits y = slope * x (one regressor) under relative-error weights.
double weighted_slope(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& t);

// Fits y = c0 * x0 + c1 * x1 under relative-error weights; when c0 comes out negative (a fixed
// cost cannot be), it is pinned at 0 and c1 refitted. Returns {c0, c1, pinned}.
struct TwoTerm {
  double c0 = 0.0, c1 = 0.0;
  bool pinned = false;
};
TwoTerm fit_two(const std::vector<double>& x0, const std::vector<double>& x1, const std::vector<double>& y,
                const std::vector<double>& t);

// Relative RMS error of `predicted` against `measured` (0 when empty).
double rel_rms(const std::vector<double>& predicted, const std::vector<double>& measured);

// `v` formatted by the printf format `f`.
std::string fmt(const char* f, double v);

// The kinds joined by "+", e.g. "copy_d2d+memory".
std::string kinds_text(const std::set<std::string>& kinds);

// An efficiency from a fitted 1/E, clamped to the schema's range (with a note when it was).
double efficiency_from_inverse(double inverse, std::string& note);

// A parameter that keeps its prior value, and why.
ParameterFit kept(std::string name, std::string target, double prior, std::string why);

// The number of distinct values in `v`.
size_t distinct(std::vector<double> v);

// gemm_efficiency, fp8_gemm_efficiency, gemm_tile_overhead_k and gemm_wave_quantization from the
// GEMM records (fit_gemm.cpp); sets them on s.r.gpu and appends the four parameters.
void fit_gemms(FitState& s);

}  // namespace trainsim::models::calibration::detail
