#include "models/calibration/fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <Eigen/Dense>

#include "models/calibration/fit_detail.hpp"
#include "models/calibration/fit_protocols.hpp"
#include "models/calibration/kernel_evidence.hpp"
#include "models/collectives/comm_model.hpp"
#include "sim/checked.hpp"
#include "sim/error.hpp"

namespace trainsim::models::calibration {

namespace detail {

std::vector<const Measurement*> FitState::of_kind(std::initializer_list<OpKind> kinds) const {
  std::vector<const Measurement*> out;
  for (const auto& m : ms.items)
    if (std::find(kinds.begin(), kinds.end(), m.kind) != kinds.end()) out.push_back(&m);
  return out;
}

namespace {
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
}  // namespace

double weighted_slope(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& t) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += x[i] * y[i] / (t[i] * t[i]);
    den += x[i] * x[i] / (t[i] * t[i]);
  }
  return den > 0.0 ? num / den : 0.0;
}

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

size_t distinct(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return static_cast<size_t>(std::unique(v.begin(), v.end()) - v.begin());
}

namespace {

using models::hardware::ClusterSpec;
using models::hardware::GpuSpec;

int64_t ring_steps(models::collectives::CollectiveOp op, int64_t n) {
  return op == models::collectives::CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
}

// kernel_launch from `launch` records: their median per-launch time (kept when there are none;
// fit_hbm may then fit it). Sets s.launch.
ParameterFit fit_launch(FitState& s) {
  ParameterFit launch_fit = kept("kernel_launch", "gpu", s.launch0, "no measurements");
  if (const auto recs = s.of_kind({OpKind::kLaunch}); !recs.empty()) {
    std::vector<double> per;
    for (const Measurement* m : recs) per.push_back(m->measured_s / std::max(1, m->kernels));
    s.launch = median(per);
    launch_fit.fitted = s.launch;
    launch_fit.kept = false;
    launch_fit.records = static_cast<int>(per.size());
    launch_fit.kinds = "launch";
    launch_fit.rms_before = rel_rms(std::vector<double>(per.size(), s.launch0), per);
    launch_fit.rms_after = rel_rms(std::vector<double>(per.size(), s.launch), per);
    launch_fit.note = "median per-launch time of back-to-back empty kernels";
  }
  return launch_fit;
}

// hbm_efficiency from `memory` and `copy_d2d` records, and kernel_launch from their intercept when
// `launch_fit` (fit_launch's) had no records; sets both on the GPU and appends both parameters.
void fit_hbm(FitState& s, ParameterFit launch_fit) {
  const GpuSpec& prior = s.prior;
  double& launch = s.launch;
  const double launch0 = s.launch0;
  const bool launch_measured = !launch_fit.kept;
  const double hbm_bw = prior.hbm_bandwidth.bytes_per_second();
  ParameterFit hbm_fit = kept("hbm_efficiency", "gpu", prior.hbm_efficiency, "no measurements");
  if (const auto recs = s.of_kind({OpKind::kMemory, OpKind::kCopyD2D}); !recs.empty()) {
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
  s.r.gpu.kernel_launch = sim::Time::from_seconds_ceil(std::max(0.0, launch));
  s.r.gpu.hbm_efficiency = hbm_fit.fitted;
  s.r.parameters.push_back(launch_fit);
  s.r.parameters.push_back(hbm_fit);
}

// The efficiency of one attention direction from its records: t = flops/(peak_bf16*clock*E) + launch
// (kept at `prior_e` when there are none).
ParameterFit fit_attention_direction(const FitState& s, const char* name, OpKind kind, double prior_e) {
  const double rate = s.prior.peak_bf16.per_second() * s.prior.sustained_clock;
  const auto recs = s.of_kind({kind});
  if (recs.empty()) return kept(name, "gpu", prior_e, "no measurements");
  std::vector<double> x, y, t;
  for (const Measurement* m : recs) {
    x.push_back(m->flops / rate);
    y.push_back(m->measured_s - s.launch);
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
    before.push_back(x[i] / prior_e + s.launch0);
    after.push_back(x[i] / p.fitted + s.launch);
  }
  p.rms_before = rel_rms(before, t);
  p.rms_after = rel_rms(after, t);
  return p;
}

// attention_efficiency and attention_bwd_efficiency: forward records fit the forward efficiency and
// backward records the backward one; with only one direction measured, the other keeps its prior.
void fit_attention(FitState& s) {
  const GpuSpec& prior = s.prior;
  const double bwd_prior = prior.attention_bwd_efficiency.value_or(prior.attention_efficiency);
  const ParameterFit fwd =
      fit_attention_direction(s, "attention_efficiency", OpKind::kAttentionFwd, prior.attention_efficiency);
  const ParameterFit bwd = fit_attention_direction(s, "attention_bwd_efficiency", OpKind::kAttentionBwd, bwd_prior);
  s.r.gpu.attention_efficiency = fwd.fitted;
  if (!bwd.kept) s.r.gpu.attention_bwd_efficiency = bwd.fitted;
  s.r.parameters.push_back(fwd);
  s.r.parameters.push_back(bwd);
}

// One collective record in the ring model: its ring steps within and across nodes, busbytes over
// the link's bandwidth (time per unit of 1/efficiency), the measured time and the buffer size.
struct CollectiveRow {
  double steps_intra = 0, steps_cross = 0, x = 0, t = 0, bytes = 0;
};

// The rows of collective records over NVLink (one node) or, with `cross_node`, over InfiniBand.
std::vector<CollectiveRow> collective_rows(const ClusterSpec& c0, const std::vector<const Measurement*>& recs,
                                           bool cross_node) {
  const double share = c0.nic_share();
  std::vector<CollectiveRow> rows;
  for (const Measurement* m : recs) {
    const auto op = models::collectives::parse_collective_op(m->op, "collective");
    const int64_t n = m->ranks;
    const int64_t s = ring_steps(op, n);
    const double busbytes = static_cast<double>(m->bytes) * models::collectives::bus_bandwidth_factor(op, n);
    CollectiveRow row;
    row.t = m->measured_s;
    row.bytes = static_cast<double>(m->bytes);
    if (!cross_node) {
      row.steps_intra = static_cast<double>(s);
      row.x = busbytes / c0.nvlink_bandwidth.bytes_per_second();
    } else {
      // Ranks per node: a whole node when the communicator is larger than one, else one rank
      // per node (a smaller group over IB spans nodes by construction).
      const int64_t per_node = n > c0.domain_gpus() ? c0.domain_gpus() : 1;
      const models::collectives::GroupPlacement gp{n, per_node};
      const int64_t cross = gp.nodes() <= 1 ? 0 : s * gp.nodes() / n;
      row.steps_cross = static_cast<double>(cross);
      row.steps_intra = static_cast<double>(s - cross);
      row.x = busbytes / (c0.nic_bandwidth.bytes_per_second() * share * static_cast<double>(per_node));
    }
    rows.push_back(row);
  }
  return rows;
}

// The number of distinct buffer sizes among the rows.
size_t sizes_of(const std::vector<CollectiveRow>& rows) {
  std::vector<double> b;
  for (const auto& row : rows) b.push_back(row.bytes);
  return distinct(b);
}

// Marks a pair of parameters fitted from `n` collective records, with their RMS errors.
void mark_fitted(ParameterFit& a, ParameterFit& b, size_t n, const std::vector<double>& before,
                 const std::vector<double>& after, const std::vector<double>& t) {
  for (ParameterFit* p : {&a, &b}) {
    p->kept = false;
    p->records = static_cast<int>(n);
    p->kinds = "collective";
    p->rms_before = rel_rms(before, t);
    p->rms_after = rel_rms(after, t);
  }
}

// collective_launch and nvlink_efficiency from the NVLink records; returns the collective launch
// time the InfiniBand fit builds on (the prior's when not fitted).
double fit_nvlink(FitState& s, const std::vector<const Measurement*>& nvl) {
  ClusterSpec& c = s.r.cluster;
  const ClusterSpec& c0 = *s.prior_cluster;
  ParameterFit p_launch = kept("collective_launch", "cluster", c0.collective_launch.seconds(), "no measurements");
  ParameterFit p_nvl = kept("nvlink_efficiency", "cluster", c0.nvlink_efficiency, "no measurements");
  double coll_launch = c0.collective_launch.seconds();
  if (!nvl.empty()) {
    const auto rows = collective_rows(c0, nvl, false);
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
      mark_fitted(p_launch, p_nvl, rows.size(), before, after, t);
      p_launch.fitted = coll_launch;
      p_launch.note = f.pinned ? "fixed cost came out negative; pinned at 0"
                               : "fixed cost of NVLink collectives beyond nvlink_latency per ring step";
      p_nvl.fitted = eff;
      p_nvl.note = eff_note.empty() ? "bus bandwidth / nvlink_bandwidth" : eff_note;
      c.collective_launch = sim::Time::from_seconds_ceil(coll_launch);
      c.nvlink_efficiency = eff;
    }
  }
  s.r.parameters.push_back(p_launch);
  s.r.parameters.push_back(p_nvl);
  return coll_launch;
}

// nic_latency and nic_efficiency from the InfiniBand records, over the collective launch time
// `coll_launch`.
void fit_infiniband(FitState& s, const std::vector<const Measurement*>& ib, double coll_launch) {
  ClusterSpec& c = s.r.cluster;
  const ClusterSpec& c0 = *s.prior_cluster;
  ParameterFit p_lat = kept("nic_latency", "cluster", c0.nic_latency.seconds(), "no measurements");
  ParameterFit p_nic = kept("nic_efficiency", "cluster", c0.nic_efficiency, "no measurements");
  if (!ib.empty()) {
    const auto rows = collective_rows(c0, ib, true);
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
      mark_fitted(p_lat, p_nic, rows.size(), before, after, t);
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
  s.r.parameters.push_back(p_lat);
  s.r.parameters.push_back(p_nic);
}

// The collective constants: NVLink records (one node) then InfiniBand ones; local and single-rank
// records are noted, and everything is noted and skipped when no cluster was given.
void fit_collectives(FitState& s) {
  const auto coll = s.of_kind({OpKind::kCollective});
  if (!s.prior_cluster) {
    if (!coll.empty())
      s.r.notes.push_back(std::to_string(coll.size()) + " collective records not fitted: no cluster was given");
    return;
  }
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
  if (local) s.r.notes.push_back(std::to_string(local) + " single-GPU (local) collective records not fitted");
  const double coll_launch = fit_nvlink(s, nvl);
  fit_infiniband(s, ib, coll_launch);
}

}  // namespace
}  // namespace detail

using detail::fmt;
using models::hardware::ClusterSpec;
using models::hardware::GpuSpec;
using nlohmann::json;

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
  detail::FitState s{ms, prior, prior_cluster, r, prior.kernel_launch.seconds(), prior.kernel_launch.seconds()};
  detail::fit_hbm(s, detail::fit_launch(s));
  detail::fit_gemms(s);
  detail::fit_attention(s);
  detail::fit_collectives(s);
  fit_protocol_scales(ms.items, r);
  r.evidence = kernel_evidence(ms, prior.name, prior_cluster ? prior_cluster->name : "");

  const size_t host = s.of_kind({OpKind::kCopyH2D, OpKind::kCopyD2H}).size();
  const size_t layers = s.of_kind({OpKind::kLayer, OpKind::kIteration}).size();
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
    if (f.name.rfind("nccl.", 0) == 0) {
      // The whole `nccl` object (an override replaces it), with the fitted scales.
      const auto& n = result.cluster.nccl;
      const auto scale = [](const models::hardware::ProtocolScale& k) {
        return json{{"latency", rounded(k.latency)}, {"bandwidth", rounded(k.bandwidth)}};
      };
      cluster_overrides["nccl"] = json{{"architecture", n.architecture},
                                       {"ll", scale(n.ll)},
                                       {"ll128", scale(n.ll128)},
                                       {"simple", scale(n.simple)},
                                       {"nvls", scale(n.nvls)}};
      sources["nccl"] = "fitted by trainsim validate from " + std::to_string(f.records) + " " + f.kinds +
                        " measurements on " + where + " (docs/network.md, Protocols)";
      continue;
    }
    json value;
    if (f.name == "kernel_launch" || f.name == "collective_launch" || f.name == "nic_latency" ||
        f.name == "nvlink_latency")
      value = duration_text(f.fitted);
    else if (f.name == "gemm_tile_overhead_k")
      value = sim::checked_int64(std::round(f.fitted), "gemm_tile_overhead_k",
                                 "the fit diverged: check the GEMM measurements");
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
              {"evidence", stack::to_json(result.evidence)},
              {"sources", sources}};
}

}  // namespace trainsim::models::calibration
