// The GEMM constants of the fit (models/calibration/fit.hpp): gemm_efficiency and
// fp8_gemm_efficiency by least squares over the math-bound records, for every point of a grid over
// gemm_tile_overhead_k and gemm_wave_quantization; the point with the least relative RMS error wins.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

#include "models/calibration/fit_detail.hpp"
#include "models/compute/compute_model.hpp"

namespace trainsim::models::calibration::detail {

using models::compute::ComputeModel;
using models::compute::GemmShape;
using models::compute::Precision;
using models::hardware::GpuSpec;

namespace {

constexpr double kMaxTileOverheadK = 4096.0;
// The tile-overhead grid: 0, 16, ..., 512, then every integer within one step of the best.
constexpr int kTileGridStep = 16, kTileGridMax = 512;

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

// The GEMM records by precision class: bf16/fp16 and fp8 (fp8 ones only when the GPU has an FP8 peak).
struct GemmRecords {
  std::vector<const Measurement*> std_recs, fp8_recs;
};

// Splits the GEMM records by precision class; notes the fp8 records ignored and records the median
// gap to the best algorithm (FitResult::gemm_best_gap).
GemmRecords gemm_records(FitState& s) {
  GemmRecords recs;
  int fp8_skipped = 0;
  std::vector<double> gaps;
  for (const Measurement* m : s.of_kind({OpKind::kGemm})) {
    if (m->best_s > 0.0) gaps.push_back((m->measured_s - m->best_s) / m->measured_s);
    if (!is_fp8(*m)) {
      recs.std_recs.push_back(m);
    } else if (s.prior.peak_fp8.per_second() > 0.0) {
      recs.fp8_recs.push_back(m);
    } else {
      ++fp8_skipped;
    }
  }
  if (fp8_skipped)
    s.r.notes.push_back(std::to_string(fp8_skipped) + " fp8 GEMM records ignored: " + s.prior.name +
                        " has no FP8 peak");
  if (!gaps.empty()) {
    s.r.gemm_searched = static_cast<int>(gaps.size());
    s.r.gemm_best_gap = median(gaps);
  }
  return recs;
}

// One point of the grid: the tile overhead, the wave weight, both classes' fits and the RMS error.
struct Candidate {
  double k0 = 0.0, w = 1.0, rms = 0.0;
  GemmGroupFit std_fit, fp8_fit;
};

// Fits both precision classes at tile overhead k0 and wave weight w; rms over every GEMM record.
Candidate evaluate(const FitState& s, const GemmRecords& recs, double k0, double w) {
  const GpuSpec& prior = s.prior;
  Candidate c;
  c.k0 = k0;
  c.w = w;
  GpuSpec cand = s.r.gpu;
  cand.gemm_tile_overhead_k = k0;
  cand.gemm_wave_quantization = w;
  const auto rs = gemm_rows(recs.std_recs, cand), r8 = gemm_rows(recs.fp8_recs, cand);
  c.std_fit = fit_gemm_group(rs, s.launch, 1.0 / prior.gemm_efficiency);
  c.fp8_fit = fit_gemm_group(r8, s.launch, 1.0 / prior.fp8_gemm_efficiency);
  std::vector<double> pred, meas;
  for (const auto& [rows, gf, e0] :
       {std::tuple{&rs, &c.std_fit, prior.gemm_efficiency}, std::tuple{&r8, &c.fp8_fit, prior.fp8_gemm_efficiency}})
    for (const auto& row : *rows) {
      pred.push_back(gemm_predict(row, gf->fitted ? gf->inv_e : 1.0 / e0, s.launch));
      meas.push_back(row.t);
    }
  c.rms = rel_rms(pred, meas);
  return c;
}

// The wave weight is identifiable when some GEMM loses part of a wave: its tiles do not fill
// the last wave under the shape model's chosen tile.
bool wave_identifiable(const GpuSpec& g, const std::vector<const Measurement*>& std_recs) {
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
}

// Grid over the wave weight (0, 0.1, ..., 1) and the tile overhead, the overhead refined to 1
// around the best; each point fits the efficiencies by least squares. Returns the best point.
Candidate grid_search(const FitState& s, const GemmRecords& recs, Candidate best, bool k0_identifiable,
                      bool w_identifiable) {
  const double k0_prior = s.prior.gemm_tile_overhead_k;
  best.rms = std::numeric_limits<double>::infinity();
  int best_grid = static_cast<int>(k0_prior);
  std::vector<double> ws;
  if (w_identifiable)
    for (int i = 0; i <= 10; ++i) ws.push_back(0.1 * i);
  else
    ws.push_back(s.prior.gemm_wave_quantization);
  for (const double w : ws) {
    if (k0_identifiable) {
      for (int k0 = 0; k0 <= kTileGridMax; k0 += kTileGridStep) {
        Candidate c = evaluate(s, recs, k0, w);
        if (c.rms < best.rms) best = std::move(c), best_grid = k0;
      }
    } else {
      Candidate c = evaluate(s, recs, k0_prior, w);
      if (c.rms < best.rms) best = std::move(c);
    }
  }
  if (k0_identifiable)
    for (int k0 = std::max(0, best_grid - kTileGridStep + 1); k0 < best_grid + kTileGridStep; ++k0) {
      if (k0 % kTileGridStep == 0) continue;
      Candidate c = evaluate(s, recs, k0, best.w);
      if (c.rms < best.rms) best = std::move(c);
    }
  return best;
}

// Relative RMS error of `recs` under `spec` with the given 1/E per class and launch time `l`.
double rms_under(const std::vector<const Measurement*>& recs, const GpuSpec& spec, double inv_std, double inv_fp8,
                 double l) {
  const auto rows = gemm_rows(recs, spec);
  std::vector<double> pred, meas;
  for (size_t i = 0; i < recs.size(); ++i) {
    pred.push_back(gemm_predict(rows[i], is_fp8(*recs[i]) ? inv_fp8 : inv_std, l));
    meas.push_back(rows[i].t);
  }
  return rel_rms(pred, meas);
}

// The RMS error of `recs` before: every GEMM constant at the prior (and the prior HBM efficiency and launch).
double rms_before(const FitState& s, const std::vector<const Measurement*>& recs) {
  return rms_under(recs, s.prior, 1.0 / s.prior.gemm_efficiency, 1.0 / s.prior.fp8_gemm_efficiency, s.launch0);
}

// The efficiency parameter of one precision class from its fit at the best grid point.
ParameterFit group_fit(const FitState& s, const GpuSpec& fitted_spec, const char* name, double prior_e,
                       const GemmGroupFit& gf, const std::vector<const Measurement*>& recs, bool fp8) {
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
  p.rms_before = rms_before(s, recs);
  p.rms_after = rms_under(recs, fitted_spec, fp8 ? 1.0 : inv, fp8 ? inv : 1.0, s.launch);
  if (p.note.empty()) p.note = std::to_string(gf.used) + " of " + std::to_string(recs.size()) + " records math-bound";
  return p;
}

// What the tile-overhead and wave-weight parameters need: the best point, every GEMM record, the
// spec at the best point and the RMS errors over all GEMM records before and after.
struct GridOutcome {
  const Candidate& best;
  std::vector<const Measurement*> all_gemm;
  double rms_before = 0.0, rms_after = 0.0;
};

// gemm_tile_overhead_k: the best grid point's tile overhead (kept when not identifiable).
ParameterFit tile_fit(const FitState& s, const GridOutcome& o, bool k0_identifiable) {
  const double k0_prior = s.prior.gemm_tile_overhead_k;
  if (o.all_gemm.empty()) return kept("gemm_tile_overhead_k", "gpu", k0_prior, "no measurements");
  if (!k0_identifiable)
    return kept("gemm_tile_overhead_k", "gpu", k0_prior, "needs math-bound GEMMs of at least two K");
  ParameterFit tile;
  tile.name = "gemm_tile_overhead_k";
  tile.target = "gpu";
  tile.prior = k0_prior;
  tile.fitted = std::min(o.best.k0, kMaxTileOverheadK);
  tile.kept = false;
  tile.records = o.best.std_fit.used + o.best.fp8_fit.used;
  tile.kinds = "gemm";
  tile.rms_before = o.rms_before;
  tile.rms_after = o.rms_after;
  tile.note = "grid 0.." + std::to_string(kTileGridMax) + " step " + std::to_string(kTileGridStep) +
              ", refined to 1; least relative RMS over all GEMM records";
  if (o.best.k0 >= kTileGridMax) tile.note += "; at the edge of the grid";
  return tile;
}

// gemm_wave_quantization: the best grid point's wave weight (kept when not identifiable).
ParameterFit wave_fit(const FitState& s, const GridOutcome& o, const ParameterFit& tile, bool w_identifiable) {
  const double w_prior = s.prior.gemm_wave_quantization;
  if (o.all_gemm.empty()) return kept("gemm_wave_quantization", "gpu", w_prior, "no measurements");
  if (!w_identifiable)
    return kept("gemm_wave_quantization", "gpu", w_prior, "needs at least 2 bf16 GEMMs that leave a wave partly idle");
  ParameterFit wave;
  wave.name = "gemm_wave_quantization";
  wave.target = "gpu";
  wave.prior = w_prior;
  wave.fitted = o.best.w;
  wave.kept = false;
  wave.records = tile.records > 0 ? tile.records : o.best.std_fit.used + o.best.fp8_fit.used;
  wave.kinds = "gemm";
  wave.rms_before = o.rms_before;
  wave.rms_after = o.rms_after;
  wave.note = "grid 0..1 step 0.1 jointly with the tile overhead";
  return wave;
}

}  // namespace

void fit_gemms(FitState& s) {
  GpuSpec& g = s.r.gpu;
  const GemmRecords recs = gemm_records(s);
  Candidate best = evaluate(s, recs, s.prior.gemm_tile_overhead_k, s.prior.gemm_wave_quantization);
  std::set<int64_t> ks;
  for (const auto* gf : {&best.std_fit, &best.fp8_fit}) ks.insert(gf->ks.begin(), gf->ks.end());
  const bool k0_identifiable = ks.size() >= 2;
  const bool w_identifiable = wave_identifiable(g, recs.std_recs);
  if (k0_identifiable || w_identifiable) best = grid_search(s, recs, std::move(best), k0_identifiable, w_identifiable);

  GpuSpec fitted_spec = g;
  fitted_spec.gemm_tile_overhead_k = best.k0;
  fitted_spec.gemm_wave_quantization = best.w;
  const ParameterFit e_std =
      group_fit(s, fitted_spec, "gemm_efficiency", s.prior.gemm_efficiency, best.std_fit, recs.std_recs, false);
  const ParameterFit e_fp8 =
      group_fit(s, fitted_spec, "fp8_gemm_efficiency", s.prior.fp8_gemm_efficiency, best.fp8_fit, recs.fp8_recs, true);
  g.gemm_efficiency = e_std.fitted;
  g.fp8_gemm_efficiency = e_fp8.fitted;

  GridOutcome o{best, recs.std_recs};
  o.all_gemm.insert(o.all_gemm.end(), recs.fp8_recs.begin(), recs.fp8_recs.end());
  if (!o.all_gemm.empty() && (k0_identifiable || w_identifiable)) {
    o.rms_before = rms_before(s, o.all_gemm);
    o.rms_after = rms_under(o.all_gemm, fitted_spec, 1.0 / e_std.fitted, 1.0 / e_fp8.fitted, s.launch);
  }
  const ParameterFit tile = tile_fit(s, o, k0_identifiable);
  if (!tile.kept) g.gemm_tile_overhead_k = tile.fitted;
  const ParameterFit wave = wave_fit(s, o, tile, w_identifiable);
  if (!wave.kept) g.gemm_wave_quantization = best.w;
  s.r.parameters.push_back(e_std);
  s.r.parameters.push_back(e_fp8);
  s.r.parameters.push_back(tile);
  s.r.parameters.push_back(wave);
}

}  // namespace trainsim::models::calibration::detail
