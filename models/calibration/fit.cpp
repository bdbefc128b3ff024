#include "models/calibration/fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>

#include <Eigen/Dense>

#include "models/collectives/comm_model.hpp"
#include "models/compute/compute_model.hpp"
#include "sim/error.hpp"

namespace trainsim::models::calibration {

using models::compute::ComputeModel;
using models::compute::GemmShape;
using models::compute::Precision;
using models::hardware::ClusterSpec;
using models::hardware::GpuSpec;
using nlohmann::json;

namespace {
// The schema ranges of the fitted fields (gpu_spec.cpp, cluster_spec.cpp).
constexpr double kMinEfficiency = 0.05, kMaxEfficiency = 1.0;
constexpr double kMaxTileOverheadK = 4096.0;
// The tile-overhead grid: 0, 16, ..., 512, then every integer within one step of the best.
constexpr int kTileGridStep = 16, kTileGridMax = 512;

// Minimises sum_i ((A x - y)_i / t_i)^2: least squares on relative error.
Eigen::VectorXd weighted_ls(const Eigen::MatrixXd& a, const Eigen::VectorXd& y, const Eigen::VectorXd& t) {
  Eigen::MatrixXd aw = a;
  Eigen::VectorXd yw = y;
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    aw.row(i) /= t(i);
    yw(i) /= t(i);
  }
  return aw.colPivHouseholderQr().solve(yw);
}

// Fits y = slope * x (one regressor) under relative-error weights.
double weighted_slope(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& t) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += x[i] * y[i] / (t[i] * t[i]);
    den += x[i] * x[i] / (t[i] * t[i]);
  }
  return den > 0.0 ? num / den : 0.0;
}

// Fits y = c0 * x0 + c1 * x1 under relative-error weights; when c0 comes out negative (a fixed
// cost cannot be), it is pinned at 0 and c1 refitted. Returns {c0, c1, pinned}.
struct TwoTerm {
  double c0 = 0.0, c1 = 0.0;
  bool pinned = false;
};
TwoTerm fit_two(const std::vector<double>& x0, const std::vector<double>& x1, const std::vector<double>& y,
                const std::vector<double>& t) {
  const auto n = static_cast<Eigen::Index>(y.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd yy(n), tt(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    a(i, 0) = x0[static_cast<size_t>(i)];
    a(i, 1) = x1[static_cast<size_t>(i)];
    yy(i) = y[static_cast<size_t>(i)];
    tt(i) = t[static_cast<size_t>(i)];
  }
  const Eigen::VectorXd c = weighted_ls(a, yy, tt);
  if (c(0) >= 0.0) return TwoTerm{c(0), c(1), false};
  return TwoTerm{0.0, weighted_slope(x1, y, t), true};
}

double rel_rms(const std::vector<double>& predicted, const std::vector<double>& measured) {
  if (measured.empty()) return 0.0;
  double s = 0.0;
  for (size_t i = 0; i < measured.size(); ++i) {
    const double r = (predicted[i] - measured[i]) / measured[i];
    s += r * r;
  }
  return std::sqrt(s / static_cast<double>(measured.size()));
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string kinds_text(const std::set<std::string>& kinds) {
  std::string out;
  for (const auto& k : kinds) out += (out.empty() ? "" : "+") + k;
  return out;
}

// An efficiency from a fitted 1/E, clamped to the schema's range (with a note when it was).
double efficiency_from_inverse(double inverse, std::string& note) {
  if (!(inverse > 0.0)) {
    note = "fitted 1/E was not positive; clamped to " + fmt("%g", kMaxEfficiency);
    return kMaxEfficiency;
  }
  const double e = 1.0 / inverse;
  if (e > kMaxEfficiency) {
    note = "fitted " + fmt("%.4g", e) + " clamped to " + fmt("%g", kMaxEfficiency) +
           " (faster than the datasheet allows: check the byte/FLOP counts and L2 residency)";
    return kMaxEfficiency;
  }
  if (e < kMinEfficiency) {
    note = "fitted " + fmt("%.4g", e) + " clamped to " + fmt("%g", kMinEfficiency);
    return kMinEfficiency;
  }
  return e;
}

ParameterFit kept(std::string name, std::string target, double prior, std::string why) {
  ParameterFit p;
  p.name = std::move(name);
  p.target = std::move(target);
  p.prior = prior;
  p.fitted = prior;
  p.kept = true;
  p.note = "kept: " + why;
  return p;
}

int64_t ring_steps(models::collectives::CollectiveOp op, int64_t n) {
  return op == models::collectives::CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
}

size_t distinct(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return static_cast<size_t>(std::unique(v.begin(), v.end()) - v.begin());
}

// ---- GEMMs ---------------------------------------------------------------------------------

// One GEMM record under a candidate tile overhead: math time per unit of 1/E, and the roofline floor.
struct GemmRow {
  double a = 0.0;    // flops / (peak * sustained_clock * shape efficiency): math time = a / E
  double mem = 0.0;  // traffic / achievable HBM bandwidth
  double t = 0.0;    // measured
  int64_t k = 0;
};

struct GemmGroupFit {
  bool fitted = false;
  double inv_e = 0.0;
  int used = 0;
  std::set<int64_t> ks;  // K of the records used
};

// 1/E by LS over the math-bound records, re-selecting them until the selection is stable.
GemmGroupFit fit_gemm_group(const std::vector<GemmRow>& rows, double launch, double inv_e0) {
  GemmGroupFit out;
  double inv_e = inv_e0;
  std::vector<bool> sel(rows.size(), false);
  for (int iter = 0; iter < 50; ++iter) {
    std::vector<bool> next(rows.size());
    std::vector<double> x, y, t;
    for (size_t i = 0; i < rows.size(); ++i) {
      next[i] = rows[i].a * inv_e >= rows[i].mem;
      if (!next[i]) continue;
      x.push_back(rows[i].a);
      y.push_back(rows[i].t - launch);
      t.push_back(rows[i].t);
    }
    if (x.empty()) return out;
    const double fitted = weighted_slope(x, y, t);
    const bool stable = next == sel && std::abs(fitted - inv_e) <= 1e-12 * std::abs(inv_e);
    sel = next;
    inv_e = fitted;
    if (stable) break;
  }
  out.fitted = true;
  out.inv_e = inv_e;
  for (size_t i = 0; i < rows.size(); ++i)
    if (sel[i]) {
      ++out.used;
      out.ks.insert(rows[i].k);
    }
  return out;
}

double gemm_predict(const GemmRow& r, double inv_e, double launch) { return std::max(r.a * inv_e, r.mem) + launch; }

bool is_fp8(const Measurement& m) { return m.precision == "fp8"; }

// Rows of `records` (GEMMs of one precision class) for the GPU `g` (its tile overhead, HBM
// efficiency; its GEMM efficiencies are ignored).
std::vector<GemmRow> gemm_rows(const std::vector<const Measurement*>& records, const GpuSpec& g) {
  std::vector<GemmRow> rows;
  GpuSpec unit = g;
  unit.gemm_efficiency = 1.0;
  unit.fp8_gemm_efficiency = 1.0;
  const ComputeModel bf16(unit, Precision::kBf16), fp16(unit, Precision::kFp16);
  const std::optional<ComputeModel> fp8 = unit.peak_fp8.per_second() > 0.0
                                              ? std::optional<ComputeModel>(ComputeModel(unit, Precision::kFp8))
                                              : std::nullopt;
  const double hbm = g.hbm_bandwidth.bytes_per_second() * g.hbm_efficiency;
  for (const Measurement* m : records) {
    const ComputeModel& cm = m->precision == "fp8" ? *fp8 : m->precision == "fp16" ? fp16 : bf16;
    const GemmShape s{m->m, m->n, m->k, m->batch};
    GemmRow r;
    r.a = s.flops().count() / (cm.peak().per_second() * cm.gemm_shape_efficiency(s));
    r.mem = static_cast<double>(cm.gemm_traffic(s).count()) / hbm;
    r.t = m->measured_s;
    r.k = m->k;
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

const ParameterFit* FitResult::find(const std::string& name) const {
  for (const auto& p : parameters)
    if (p.name == name) return &p;
  return nullptr;
}

json FitResult::to_json() const {
  json params = json::array();
  for (const auto& p : parameters)
    params.push_back(json{{"name", p.name},
                          {"target", p.target},
                          {"prior", p.prior},
                          {"fitted", p.fitted},
                          {"kept", p.kept},
                          {"records", p.records},
                          {"kinds", p.kinds},
                          {"relative_rms_before", p.rms_before},
                          {"relative_rms_after", p.rms_after},
                          {"note", p.note}});
  json out{{"gpu", gpu.name}, {"parameters", params}, {"notes", notes}};
  if (has_cluster) out["cluster"] = cluster.name;
  if (gemm_searched > 0)
    out["gemm_algorithm_search"] = json{{"records", gemm_searched}, {"median_gap_measured_vs_best", gemm_best_gap}};
  return out;
}

FitResult fit(const MeasurementSet& ms, const GpuSpec& prior, const ClusterSpec* prior_cluster) {
  FitResult r;
  r.gpu = prior;
  if (prior_cluster) {
    r.cluster = *prior_cluster;
    r.has_cluster = true;
  }
  GpuSpec& g = r.gpu;
  auto of_kind = [&](std::initializer_list<OpKind> kinds) {
    std::vector<const Measurement*> out;
    for (const auto& m : ms.items)
      if (std::find(kinds.begin(), kinds.end(), m.kind) != kinds.end()) out.push_back(&m);
    return out;
  };

  // ---- kernel_launch from launch records --------------------------------------------------
  const double launch0 = prior.kernel_launch.seconds();
  double launch = launch0;
  ParameterFit launch_fit = kept("kernel_launch", "gpu", launch0, "no measurements");
  if (const auto recs = of_kind({OpKind::kLaunch}); !recs.empty()) {
    std::vector<double> per;
    for (const Measurement* m : recs) per.push_back(m->measured_s / std::max(1, m->kernels));
    launch = median(per);
    launch_fit.fitted = launch;
    launch_fit.kept = false;
    launch_fit.records = static_cast<int>(per.size());
    launch_fit.kinds = "launch";
    launch_fit.rms_before = rel_rms(std::vector<double>(per.size(), launch0), per);
    launch_fit.rms_after = rel_rms(std::vector<double>(per.size(), launch), per);
    launch_fit.note = "median per-launch time of back-to-back empty kernels";
  }
  const bool launch_measured = !launch_fit.kept;

  // ---- hbm_efficiency (and kernel_launch when not measured) -------------------------------
  const double hbm_bw = prior.hbm_bandwidth.bytes_per_second();
  ParameterFit hbm_fit = kept("hbm_efficiency", "gpu", prior.hbm_efficiency, "no measurements");
  if (const auto recs = of_kind({OpKind::kMemory, OpKind::kCopyD2D}); !recs.empty()) {
    std::vector<double> kern, x, t, sizes;
    std::set<std::string> kinds;
    for (const Measurement* m : recs) {
      kern.push_back(static_cast<double>(m->kernels));
      x.push_back(static_cast<double>(m->bytes) / hbm_bw);
      t.push_back(m->measured_s);
      sizes.push_back(static_cast<double>(m->bytes));
      kinds.insert(to_string(m->kind));
    }
    double inv_e;
    std::string launch_note;
    if (launch_measured || distinct(sizes) < 2) {
      std::vector<double> y;
      for (size_t i = 0; i < t.size(); ++i) y.push_back(t[i] - kern[i] * launch);
      inv_e = weighted_slope(x, y, t);
      if (!launch_measured) launch_note = "kept: memory records of fewer than 2 sizes cannot separate it";
    } else {
      const TwoTerm c = fit_two(kern, x, t, t);
      launch = c.c0;
      inv_e = c.c1;
      launch_note = c.pinned ? "intercept of the memory fit came out negative; pinned at 0"
                             : "intercept of the memory fit (no launch records)";
    }
    hbm_fit.kept = false;
    hbm_fit.note.clear();
    hbm_fit.fitted = efficiency_from_inverse(inv_e, hbm_fit.note);
    if (hbm_fit.note.empty()) hbm_fit.note = "t = kernels * kernel_launch + bytes / (hbm_bandwidth * efficiency)";
    hbm_fit.records = static_cast<int>(t.size());
    hbm_fit.kinds = kinds_text(kinds);
    std::vector<double> before, after;
    for (size_t i = 0; i < t.size(); ++i) {
      before.push_back(kern[i] * launch0 + x[i] / prior.hbm_efficiency);
      after.push_back(kern[i] * launch + x[i] / hbm_fit.fitted);
    }
    hbm_fit.rms_before = rel_rms(before, t);
    hbm_fit.rms_after = rel_rms(after, t);
    if (!launch_measured) {
      launch_fit = hbm_fit;
      launch_fit.name = "kernel_launch";
      launch_fit.prior = launch0;
      launch_fit.fitted = launch;
      launch_fit.note = launch_note;
      launch_fit.kept = launch_note.rfind("kept", 0) == 0;
      if (launch_fit.kept) launch_fit.fitted = launch = launch0;
    }
  }
  g.kernel_launch = sim::Time::from_seconds_ceil(std::max(0.0, launch));
  g.hbm_efficiency = hbm_fit.fitted;
  r.parameters.push_back(launch_fit);
  r.parameters.push_back(hbm_fit);

  // ---- GEMMs: gemm_efficiency, fp8_gemm_efficiency, gemm_tile_overhead_k ------------------
  {
    std::vector<const Measurement*> std_recs, fp8_recs;
    int fp8_skipped = 0;
    std::vector<double> gaps;
    for (const Measurement* m : of_kind({OpKind::kGemm})) {
      if (m->best_s > 0.0) gaps.push_back((m->measured_s - m->best_s) / m->measured_s);
      if (!is_fp8(*m)) {
        std_recs.push_back(m);
      } else if (prior.peak_fp8.per_second() > 0.0) {
        fp8_recs.push_back(m);
      } else {
        ++fp8_skipped;
      }
    }
    if (fp8_skipped)
      r.notes.push_back(std::to_string(fp8_skipped) + " fp8 GEMM records ignored: " + prior.name + " has no FP8 peak");
    if (!gaps.empty()) {
      r.gemm_searched = static_cast<int>(gaps.size());
      r.gemm_best_gap = median(gaps);
    }
    const double k0_prior = prior.gemm_tile_overhead_k;
    const double w_prior = prior.gemm_wave_quantization;
    struct Candidate {
      double k0 = 0.0, w = 1.0, rms = 0.0;
      GemmGroupFit std_fit, fp8_fit;
    };
    // Fits both precision classes at tile overhead k0; rms over every GEMM record.
    auto evaluate = [&](double k0, double w) {
      Candidate c;
      c.k0 = k0;
      c.w = w;
      GpuSpec cand = g;
      cand.gemm_tile_overhead_k = k0;
      cand.gemm_wave_quantization = w;
      const auto rs = gemm_rows(std_recs, cand), r8 = gemm_rows(fp8_recs, cand);
      c.std_fit = fit_gemm_group(rs, launch, 1.0 / prior.gemm_efficiency);
      c.fp8_fit = fit_gemm_group(r8, launch, 1.0 / prior.fp8_gemm_efficiency);
      std::vector<double> pred, meas;
      for (const auto& [rows, gf, e0] :
           {std::tuple{&rs, &c.std_fit, prior.gemm_efficiency}, std::tuple{&r8, &c.fp8_fit, prior.fp8_gemm_efficiency}})
        for (const auto& row : *rows) {
          pred.push_back(gemm_predict(row, gf->fitted ? gf->inv_e : 1.0 / e0, launch));
          meas.push_back(row.t);
        }
      c.rms = rel_rms(pred, meas);
      return c;
    };
    Candidate best = evaluate(k0_prior, w_prior);
    std::set<int64_t> ks;
    for (const auto* gf : {&best.std_fit, &best.fp8_fit}) ks.insert(gf->ks.begin(), gf->ks.end());
    const bool k0_identifiable = ks.size() >= 2;
    // The wave weight is identifiable when some GEMM loses part of a wave: its tiles do not fill
    // the last wave under the shape model's chosen tile.
    const bool w_identifiable = [&] {
      GpuSpec classic = g, streamk = g;
      classic.gemm_wave_quantization = 1.0;
      streamk.gemm_wave_quantization = 0.0;
      const models::compute::ComputeModel a(classic, models::compute::Precision::kBf16);
      const models::compute::ComputeModel b(streamk, models::compute::Precision::kBf16);
      int informative = 0;
      for (const Measurement* m : std_recs) {
        const models::compute::GemmShape s{m->m, m->n, m->k, m->batch};
        if (a.gemm_shape_efficiency(s) < 0.97 * b.gemm_shape_efficiency(s)) ++informative;
      }
      return informative >= 2 && std_recs.size() >= 4;
    }();
    if (k0_identifiable || w_identifiable) {
      // Grid over the wave weight (0, 0.1, ..., 1) and the tile overhead, the overhead refined to 1
      // around the best; each point fits the efficiencies by least squares.
      best.rms = std::numeric_limits<double>::infinity();
      int best_grid = static_cast<int>(k0_prior);
      std::vector<double> ws;
      if (w_identifiable)
        for (int i = 0; i <= 10; ++i) ws.push_back(0.1 * i);
      else
        ws.push_back(w_prior);
      for (const double w : ws) {
        if (k0_identifiable) {
          for (int k0 = 0; k0 <= kTileGridMax; k0 += kTileGridStep) {
            Candidate c = evaluate(k0, w);
            if (c.rms < best.rms) best = std::move(c), best_grid = k0;
          }
        } else {
          Candidate c = evaluate(k0_prior, w);
          if (c.rms < best.rms) best = std::move(c);
        }
      }
      if (k0_identifiable)
        for (int k0 = std::max(0, best_grid - kTileGridStep + 1); k0 < best_grid + kTileGridStep; ++k0) {
          if (k0 % kTileGridStep == 0) continue;
          Candidate c = evaluate(k0, best.w);
          if (c.rms < best.rms) best = std::move(c);
        }
    }
    // Before: every GEMM constant at the prior (and the prior HBM efficiency and launch).
    auto rms_under = [&](const std::vector<const Measurement*>& recs, const GpuSpec& spec, double inv_std,
                         double inv_fp8, double l) {
      const auto rows = gemm_rows(recs, spec);
      std::vector<double> pred, meas;
      for (size_t i = 0; i < recs.size(); ++i) {
        pred.push_back(gemm_predict(rows[i], is_fp8(*recs[i]) ? inv_fp8 : inv_std, l));
        meas.push_back(rows[i].t);
      }
      return rel_rms(pred, meas);
    };
    GpuSpec fitted_spec = g;
    fitted_spec.gemm_tile_overhead_k = best.k0;
    fitted_spec.gemm_wave_quantization = best.w;
    auto group = [&](const char* name, double prior_e, const GemmGroupFit& gf,
                     const std::vector<const Measurement*>& recs, bool fp8) {
      if (recs.empty()) return kept(name, "gpu", prior_e, "no measurements");
      if (!gf.fitted) return kept(name, "gpu", prior_e, "no math-bound GEMM among the records");
      ParameterFit p;
      p.name = name;
      p.target = "gpu";
      p.prior = prior_e;
      p.kept = false;
      p.fitted = efficiency_from_inverse(gf.inv_e, p.note);
      p.records = gf.used;
      p.kinds = "gemm";
      const double inv = 1.0 / p.fitted;
      p.rms_before = rms_under(recs, prior, 1.0 / prior.gemm_efficiency, 1.0 / prior.fp8_gemm_efficiency, launch0);
      p.rms_after = rms_under(recs, fitted_spec, fp8 ? 1.0 : inv, fp8 ? inv : 1.0, launch);
      if (p.note.empty())
        p.note = std::to_string(gf.used) + " of " + std::to_string(recs.size()) + " records math-bound";
      return p;
    };
    const ParameterFit e_std = group("gemm_efficiency", prior.gemm_efficiency, best.std_fit, std_recs, false);
    const ParameterFit e_fp8 = group("fp8_gemm_efficiency", prior.fp8_gemm_efficiency, best.fp8_fit, fp8_recs, true);
    g.gemm_efficiency = e_std.fitted;
    g.fp8_gemm_efficiency = e_fp8.fitted;
    ParameterFit tile;
    std::vector<const Measurement*> all_gemm = std_recs;
    all_gemm.insert(all_gemm.end(), fp8_recs.begin(), fp8_recs.end());
    if (all_gemm.empty()) {
      tile = kept("gemm_tile_overhead_k", "gpu", k0_prior, "no measurements");
    } else if (!k0_identifiable) {
      tile = kept("gemm_tile_overhead_k", "gpu", k0_prior, "needs math-bound GEMMs of at least two K");
    } else {
      tile.name = "gemm_tile_overhead_k";
      tile.target = "gpu";
      tile.prior = k0_prior;
      tile.fitted = std::min(best.k0, kMaxTileOverheadK);
      tile.kept = false;
      tile.records = best.std_fit.used + best.fp8_fit.used;
      tile.kinds = "gemm";
      tile.rms_before =
          rms_under(all_gemm, prior, 1.0 / prior.gemm_efficiency, 1.0 / prior.fp8_gemm_efficiency, launch0);
      tile.rms_after = rms_under(all_gemm, fitted_spec, 1.0 / e_std.fitted, 1.0 / e_fp8.fitted, launch);
      tile.note = "grid 0.." + std::to_string(kTileGridMax) + " step " + std::to_string(kTileGridStep) +
                  ", refined to 1; least relative RMS over all GEMM records";
      if (best.k0 >= kTileGridMax) tile.note += "; at the edge of the grid";
      g.gemm_tile_overhead_k = tile.fitted;
    }
    ParameterFit wave;
    if (all_gemm.empty()) {
      wave = kept("gemm_wave_quantization", "gpu", w_prior, "no measurements");
    } else if (!w_identifiable) {
      wave =
          kept("gemm_wave_quantization", "gpu", w_prior, "needs at least 2 bf16 GEMMs that leave a wave partly idle");
    } else {
      wave.name = "gemm_wave_quantization";
      wave.target = "gpu";
      wave.prior = w_prior;
      wave.fitted = best.w;
      wave.kept = false;
      wave.records = tile.records > 0 ? tile.records : best.std_fit.used + best.fp8_fit.used;
      wave.kinds = "gemm";
      wave.rms_before =
          rms_under(all_gemm, prior, 1.0 / prior.gemm_efficiency, 1.0 / prior.fp8_gemm_efficiency, launch0);
      wave.rms_after = rms_under(all_gemm, fitted_spec, 1.0 / e_std.fitted, 1.0 / e_fp8.fitted, launch);
      wave.note = "grid 0..1 step 0.1 jointly with the tile overhead";
      g.gemm_wave_quantization = best.w;
    }
    r.parameters.push_back(e_std);
    r.parameters.push_back(e_fp8);
    r.parameters.push_back(tile);
    r.parameters.push_back(wave);
  }

  // ---- attention_efficiency, attention_bwd_efficiency -------------------------------------
  // Forward records fit the forward efficiency and backward records the backward one; with only
  // one direction measured, the other keeps its prior.
  {
    const double rate = prior.peak_bf16.per_second() * prior.sustained_clock;
    const double bwd_prior = prior.attention_bwd_efficiency.value_or(prior.attention_efficiency);
    auto fit_direction = [&](const char* name, OpKind kind, double prior_e) {
      const auto recs = of_kind({kind});
      if (recs.empty()) return kept(name, "gpu", prior_e, "no measurements");
      std::vector<double> x, y, t;
      for (const Measurement* m : recs) {
        x.push_back(m->flops / rate);
        y.push_back(m->measured_s - launch);
        t.push_back(m->measured_s);
      }
      ParameterFit p;
      p.name = name;
      p.target = "gpu";
      p.prior = prior_e;
      p.kept = false;
      p.fitted = efficiency_from_inverse(weighted_slope(x, y, t), p.note);
      p.records = static_cast<int>(t.size());
      p.kinds = to_string(kind);
      std::vector<double> before, after;
      for (size_t i = 0; i < t.size(); ++i) {
        before.push_back(x[i] / prior_e + launch0);
        after.push_back(x[i] / p.fitted + launch);
      }
      p.rms_before = rel_rms(before, t);
      p.rms_after = rel_rms(after, t);
      return p;
    };
    const ParameterFit fwd = fit_direction("attention_efficiency", OpKind::kAttentionFwd, prior.attention_efficiency);
    const ParameterFit bwd = fit_direction("attention_bwd_efficiency", OpKind::kAttentionBwd, bwd_prior);
    g.attention_efficiency = fwd.fitted;
    if (!bwd.kept) g.attention_bwd_efficiency = bwd.fitted;
    r.parameters.push_back(fwd);
    r.parameters.push_back(bwd);
  }

  // ---- collectives ---------------------------------------------------------------------------
  const auto coll = of_kind({OpKind::kCollective});
  if (!prior_cluster) {
    if (!coll.empty())
      r.notes.push_back(std::to_string(coll.size()) + " collective records not fitted: no cluster was given");
  } else {
    ClusterSpec& c = r.cluster;
    const ClusterSpec& c0 = *prior_cluster;
    std::vector<const Measurement*> nvl, ib;
    int local = 0;
    for (const Measurement* m : coll) {
      if (m->ranks < 2)
        ++local;
      else if (m->link_class == "nvlink")
        nvl.push_back(m);
      else if (m->link_class == "ib")
        ib.push_back(m);
      else
        ++local;
    }
    if (local) r.notes.push_back(std::to_string(local) + " single-GPU (local) collective records not fitted");
    struct Row {
      double steps_intra = 0, steps_cross = 0, x = 0, t = 0, bytes = 0;
    };
    const double gpn = static_cast<double>(std::max<int64_t>(1, c0.gpus_per_node));
    const double share = std::min(1.0, static_cast<double>(c0.nics_per_node) / gpn);
    auto rows_of = [&](const std::vector<const Measurement*>& recs, bool cross_node) {
      std::vector<Row> rows;
      for (const Measurement* m : recs) {
        const auto op = models::collectives::parse_collective_op(m->op, "collective");
        const int64_t n = m->ranks;
        const int64_t s = ring_steps(op, n);
        const double busbytes = static_cast<double>(m->bytes) * models::collectives::bus_bandwidth_factor(op, n);
        Row row;
        row.t = m->measured_s;
        row.bytes = static_cast<double>(m->bytes);
        if (!cross_node) {
          row.steps_intra = static_cast<double>(s);
          row.x = busbytes / c0.nvlink_bandwidth.bytes_per_second();
        } else {
          // Ranks per node: a whole node when the communicator is larger than one, else one rank
          // per node (a smaller group over IB spans nodes by construction).
          const int64_t per_node = n > c0.gpus_per_node ? c0.gpus_per_node : 1;
          const models::collectives::GroupPlacement gp{n, per_node};
          const int64_t cross = gp.nodes() <= 1 ? 0 : s * gp.nodes() / n;
          row.steps_cross = static_cast<double>(cross);
          row.steps_intra = static_cast<double>(s - cross);
          row.x = busbytes / (c0.nic_bandwidth.bytes_per_second() * share * static_cast<double>(per_node));
        }
        rows.push_back(row);
      }
      return rows;
    };
    auto sizes_of = [](const std::vector<Row>& rows) {
      std::vector<double> b;
      for (const auto& row : rows) b.push_back(row.bytes);
      return distinct(b);
    };
    // NVLink: collective_launch and nvlink_efficiency.
    ParameterFit p_launch = kept("collective_launch", "cluster", c0.collective_launch.seconds(), "no measurements");
    ParameterFit p_nvl = kept("nvlink_efficiency", "cluster", c0.nvlink_efficiency, "no measurements");
    double coll_launch = c0.collective_launch.seconds();
    if (!nvl.empty()) {
      const auto rows = rows_of(nvl, false);
      if (sizes_of(rows) < 2) {
        p_launch.note = p_nvl.note = "kept: NVLink collectives of fewer than 2 sizes";
      } else {
        std::vector<double> ones(rows.size(), 1.0), x, y, t;
        for (const auto& row : rows) {
          x.push_back(row.x);
          y.push_back(row.t - c0.nvlink_latency.seconds() * row.steps_intra);
          t.push_back(row.t);
        }
        const TwoTerm f = fit_two(ones, x, y, t);
        coll_launch = f.c0;
        std::vector<double> before, after;
        std::string eff_note;
        const double eff = efficiency_from_inverse(f.c1, eff_note);
        for (const auto& row : rows) {
          const double hop = c0.nvlink_latency.seconds() * row.steps_intra;
          before.push_back(c0.collective_launch.seconds() + hop + row.x / c0.nvlink_efficiency);
          after.push_back(coll_launch + hop + row.x / eff);
        }
        for (ParameterFit* p : {&p_launch, &p_nvl}) {
          p->kept = false;
          p->records = static_cast<int>(rows.size());
          p->kinds = "collective";
          p->rms_before = rel_rms(before, t);
          p->rms_after = rel_rms(after, t);
        }
        p_launch.fitted = coll_launch;
        p_launch.note = f.pinned ? "fixed cost came out negative; pinned at 0"
                                 : "fixed cost of NVLink collectives beyond nvlink_latency per ring step";
        p_nvl.fitted = eff;
        p_nvl.note = eff_note.empty() ? "bus bandwidth / nvlink_bandwidth" : eff_note;
        c.collective_launch = sim::Time::from_seconds_ceil(coll_launch);
        c.nvlink_efficiency = eff;
      }
    }
    r.parameters.push_back(p_launch);
    r.parameters.push_back(p_nvl);
    // InfiniBand: nic_latency and nic_efficiency.
    ParameterFit p_lat = kept("nic_latency", "cluster", c0.nic_latency.seconds(), "no measurements");
    ParameterFit p_nic = kept("nic_efficiency", "cluster", c0.nic_efficiency, "no measurements");
    if (!ib.empty()) {
      const auto rows = rows_of(ib, true);
      if (sizes_of(rows) < 2) {
        p_lat.note = p_nic.note = "kept: InfiniBand collectives of fewer than 2 sizes";
      } else {
        const double nvl_lat = c0.nvlink_latency.seconds();
        std::vector<double> cross, x, y, t;
        for (const auto& row : rows) {
          cross.push_back(row.steps_cross);
          x.push_back(row.x);
          y.push_back(row.t - coll_launch - nvl_lat * row.steps_intra);
          t.push_back(row.t);
        }
        const TwoTerm f = fit_two(cross, x, y, t);
        std::string eff_note;
        const double eff = efficiency_from_inverse(f.c1, eff_note);
        std::vector<double> before, after;
        for (const auto& row : rows) {
          before.push_back(c0.collective_launch.seconds() + nvl_lat * row.steps_intra +
                           c0.nic_latency.seconds() * row.steps_cross + row.x / c0.nic_efficiency);
          after.push_back(coll_launch + nvl_lat * row.steps_intra + f.c0 * row.steps_cross + row.x / eff);
        }
        for (ParameterFit* p : {&p_lat, &p_nic}) {
          p->kept = false;
          p->records = static_cast<int>(rows.size());
          p->kinds = "collective";
          p->rms_before = rel_rms(before, t);
          p->rms_after = rel_rms(after, t);
        }
        p_lat.fitted = f.c0;
        p_lat.note = f.pinned ? "per-hop latency came out negative; pinned at 0"
                              : "fixed cost per cross-node ring step, beyond collective_launch";
        p_nic.fitted = eff;
        p_nic.note = (eff_note.empty() ? "" : eff_note + "; ") +
                     std::string("ring model; the simulator may pick a tree for multi-node all-reduce");
        c.nic_latency = sim::Time::from_seconds_ceil(f.c0);
        c.nic_efficiency = eff;
      }
    }
    r.parameters.push_back(p_lat);
    r.parameters.push_back(p_nic);
  }

  const size_t host = of_kind({OpKind::kCopyH2D, OpKind::kCopyD2H}).size();
  const size_t layers = of_kind({OpKind::kLayer, OpKind::kIteration}).size();
  if (host || layers)
    r.notes.push_back(std::to_string(host) + " host copy and " + std::to_string(layers) +
                      " layer records are not fitted (no constant models host copies; layers are compared by "
                      "the report)");
  return r;
}

namespace {
// Four significant digits: a calibration file is read by people too.
double rounded(double v) {
  if (v == 0.0) return 0.0;
  const double scale = std::pow(10.0, 3 - static_cast<int>(std::floor(std::log10(std::abs(v)))));
  return std::round(v * scale) / scale;
}

std::string duration_text(double seconds) {
  return std::to_string(sim::Time::from_seconds_ceil(std::max(0.0, seconds)).count_ns()) + "ns";
}
}  // namespace

json calibration_json(const FitResult& result, const Provenance& p, const std::string& name) {
  json gpu_overrides = json::object(), cluster_overrides = json::object(), sources = json::object();
  const std::string where = (p.gpu_name.empty() ? result.gpu.name : p.gpu_name) + (p.date.empty() ? "" : ", " + p.date);
  for (const ParameterFit& f : result.parameters) {
    if (f.kept) continue;
    json value;
    if (f.name == "kernel_launch" || f.name == "collective_launch" || f.name == "nic_latency" ||
        f.name == "nvlink_latency")
      value = duration_text(f.fitted);
    else if (f.name == "gemm_tile_overhead_k")
      value = static_cast<int64_t>(std::round(f.fitted));
    else
      value = rounded(f.fitted);
    (f.target == "gpu" ? gpu_overrides : cluster_overrides)[f.name] = value;
    sources[f.name] = "fitted by trainsim validate from " + std::to_string(f.records) + " " + f.kinds +
                      " measurements on " + where + ": relative RMS error " + fmt("%.2f", 100.0 * f.rms_after) + "% (" +
                      fmt("%.2f", 100.0 * f.rms_before) + "% with the preset's value)";
  }
  return json{{"schema_version", 1},
              {"name", name},
              {"description", "Fitted by trainsim validate on " + where},
              {"gpu", result.gpu.name},
              {"gpu_overrides", gpu_overrides},
              {"cluster_overrides", cluster_overrides},
              {"provenance", to_json(p)},
              {"fit", result.to_json()},
              {"sources", sources}};
}

}  // namespace trainsim::models::calibration
