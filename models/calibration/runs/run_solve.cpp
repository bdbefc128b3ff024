#include "models/calibration/runs/run_solve.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim::models::calibration {

using sim::config::Json;

namespace {

// A constant that moves no run by this much per prior width is not identifiable.
constexpr double kMinEffect = 0.005;
// Share of a constant's effect that must be left once the chosen constants are projected out.
constexpr double kMinIndependent = 0.2;
}  // namespace

double robust_scale(const std::vector<double>& abs) { return std::max(kRunNoise, 1.4826 * median(abs)); }

double huber_loss(const Eigen::VectorXd& e, double c) {
  double loss = 0;
  for (Eigen::Index r = 0; r < e.size(); ++r) {
    const double a = std::abs(e(r));
    loss += a <= c ? a * a : c * (2.0 * a - c);
  }
  return loss;
}

namespace {
// Huber loss (threshold c) of the runs' log errors after the MAP fit of `free` from the priors:
// squares for errors below c, linear beyond, so that runs far off do not choose the constants.
double fitted_loss(const Eigen::MatrixXd& z, const Eigen::VectorXd& g, const std::vector<size_t>& free,
                   const std::vector<RunParameter>& params, double c) {
  std::vector<size_t> rows(static_cast<size_t>(g.size()));
  for (size_t r = 0; r < rows.size(); ++r) rows[r] = r;
  const Eigen::VectorXd u0 = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(params.size()));
  const Eigen::VectorXd u = free.empty() ? u0 : solve_map(z, g, u0, free, params, rows).u;
  return huber_loss(g + z * u, c);
}
}  // namespace

Selection select_constants(const Eigen::MatrixXd& z, const Eigen::VectorXd& g, const std::vector<RunParameter>& params,
                           const std::vector<int>& informed) {
  const size_t k = params.size(), runs = static_cast<size_t>(g.size());
  Selection s;
  s.why.assign(k, "");
  const size_t max_free = std::max<size_t>(1, runs / 3);
  // An added constant must cut the squared errors by the Bayesian information criterion's
  // price of a parameter: a factor exp(-ln(n) / n) (20 % at 11 runs, 4 % at 100).
  const double keep_share = runs > 1 ? std::exp(-std::log(static_cast<double>(runs)) / static_cast<double>(runs)) : 1.0;
  std::vector<Eigen::VectorXd> basis;
  std::vector<bool> candidate(k, true);
  for (size_t p = 0; p < k; ++p) {
    if (informed[p] == 0) {
      s.why[p] = "kept: no run uses it";
      candidate[p] = false;
    } else if (z.col(static_cast<Eigen::Index>(p)).cwiseAbs().maxCoeff() < kMinEffect) {
      s.why[p] = "kept: moves no run by 0.5% per prior width";
      candidate[p] = false;
    }
  }
  auto independent = [&](size_t p) {
    Eigen::VectorXd v = z.col(static_cast<Eigen::Index>(p));
    const double norm = v.norm();
    for (const auto& q : basis) v -= q * q.dot(v);
    return v.norm() >= kMinIndependent * norm;
  };
  std::vector<double> start(static_cast<size_t>(g.size()));
  for (Eigen::Index r = 0; r < g.size(); ++r) start[static_cast<size_t>(r)] = std::abs(g(r));
  const double c = kHuberK * robust_scale(start);
  double rss = fitted_loss(z, g, {}, params, c);
  bool stopped_by_criterion = false;
  while (s.free.size() < max_free) {
    size_t best = k;
    double best_rss = rss;
    for (size_t p = 0; p < k; ++p) {
      if (!candidate[p] || !independent(p)) continue;
      std::vector<size_t> trial = s.free;
      trial.push_back(p);
      const double r = fitted_loss(z, g, trial, params, c);
      if (r < best_rss) best_rss = r, best = p;
    }
    if (best == k || best_rss > keep_share * rss) {
      stopped_by_criterion = true;
      break;
    }
    Eigen::VectorXd v = z.col(static_cast<Eigen::Index>(best));
    for (const auto& q : basis) v -= q * q.dot(v);
    basis.push_back(v / v.norm());
    s.free.push_back(best);
    candidate[best] = false;
    rss = best_rss;
  }
  for (size_t p = 0; p < k; ++p) {
    if (!candidate[p]) continue;
    if (!independent(p))
      s.why[p] = "kept: the runs cannot tell it from the fitted constants";
    else if (s.free.size() >= max_free)
      s.why[p] = "kept: " + std::to_string(runs) + " runs support " + std::to_string(max_free) + " constants";
    else
      s.why[p] = stopped_by_criterion ? "kept: would not explain enough of the runs' errors" : "kept";
  }
  return s;
}

Solution solve_map(const Eigen::MatrixXd& z, const Eigen::VectorXd& g, const Eigen::VectorXd& u0,
                   const std::vector<size_t>& free_in, const std::vector<RunParameter>& params,
                   const std::vector<size_t>& rows) {
  const auto k = static_cast<Eigen::Index>(params.size());
  Solution sol;
  sol.u = u0;
  sol.sd = Eigen::VectorXd::Zero(k);
  sol.at_bound.assign(params.size(), false);
  std::vector<size_t> free = free_in;
  double scale = kRunNoise;
  Eigen::VectorXd w = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(rows.size()));
  // Huber weights and the robust scale from the residuals at sol.u (at the start: at u0, so that
  // runs far off weigh little from the first solve on). Returns whether the scale settled.
  auto reweight = [&] {
    std::vector<double> res(rows.size());
    for (size_t r = 0; r < rows.size(); ++r) {
      const auto ri = static_cast<Eigen::Index>(rows[r]);
      double e = g(ri);
      for (Eigen::Index p = 0; p < k; ++p) e += z(ri, p) * (sol.u(p) - u0(p));
      res[r] = std::abs(e);
    }
    const double new_scale = robust_scale(res);
    const double c = kHuberK * new_scale;
    for (size_t r = 0; r < rows.size(); ++r) w(static_cast<Eigen::Index>(r)) = res[r] <= c ? 1.0 : c / res[r];
    const bool settled = std::abs(new_scale - scale) < 1e-4;
    scale = new_scale;
    return settled;
  };
  reweight();
  for (int iter = 0; iter < 30 && !free.empty(); ++iter) {
    const auto f = static_cast<Eigen::Index>(free.size());
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(f, f);
    Eigen::VectorXd b = Eigen::VectorXd::Zero(f);
    for (size_t r = 0; r < rows.size(); ++r) {
      const auto ri = static_cast<Eigen::Index>(rows[r]);
      // Residual at u with the free constants' part taken out: y = -(g + z (u - u0)) + z_F u_F.
      double y = -g(ri);
      for (Eigen::Index p = 0; p < k; ++p) y -= z(ri, p) * (sol.u(p) - u0(p));
      Eigen::VectorXd zf(f);
      for (Eigen::Index c = 0; c < f; ++c) {
        zf(c) = z(ri, static_cast<Eigen::Index>(free[static_cast<size_t>(c)]));
        y += zf(c) * sol.u(static_cast<Eigen::Index>(free[static_cast<size_t>(c)]));
      }
      const double wr = w(static_cast<Eigen::Index>(r)) / (kRunNoise * kRunNoise);
      a += wr * zf * zf.transpose();
      b += wr * zf * y;
    }
    a += Eigen::MatrixXd::Identity(f, f);
    const Eigen::VectorXd uf = a.ldlt().solve(b);
    // Bounds: a constant past one is set on it and the rest solved again.
    bool clamped = false;
    for (Eigen::Index c = 0; c < f; ++c) {
      const size_t p = free[static_cast<size_t>(c)];
      const RunParameter& q = params[p];
      const double x0 = q.coordinate(q.prior);
      const double lo = (q.coordinate(std::max(q.lo, 1e-12)) - x0) / q.sigma, hi = (q.coordinate(q.hi) - x0) / q.sigma;
      double v = uf(c);
      if (v < lo || v > hi) {
        v = std::clamp(v, lo, hi);
        sol.at_bound[p] = true;
        clamped = true;
      }
      sol.u(static_cast<Eigen::Index>(p)) = v;
    }
    if (clamped) {
      std::vector<size_t> rest;
      for (size_t p : free)
        if (!sol.at_bound[p]) rest.push_back(p);
      free = rest;
    }
    if (reweight() && !clamped && iter > 2) break;
  }
  // The constants' uncertainty with the noise the residuals show (at least kRunNoise).
  if (!free.empty()) {
    const auto f = static_cast<Eigen::Index>(free.size());
    Eigen::MatrixXd a = Eigen::MatrixXd::Identity(f, f);
    for (size_t r = 0; r < rows.size(); ++r) {
      Eigen::VectorXd zf(f);
      for (Eigen::Index c = 0; c < f; ++c)
        zf(c) = z(static_cast<Eigen::Index>(rows[r]), static_cast<Eigen::Index>(free[static_cast<size_t>(c)]));
      a += w(static_cast<Eigen::Index>(r)) / (scale * scale) * zf * zf.transpose();
    }
    const Eigen::MatrixXd cov = a.inverse();
    for (Eigen::Index c = 0; c < f; ++c)
      sol.sd(static_cast<Eigen::Index>(free[static_cast<size_t>(c)])) = std::sqrt(cov(c, c));
  }
  sol.scale = scale;
  return sol;
}

Json fitted_calibration(const std::vector<RunParameter>& params, const Eigen::VectorXd& u, const workload::Job& job,
                        const std::vector<size_t>& free, const Json& base) {
  std::vector<RunParameter> ps;
  std::vector<double> vs;
  std::vector<size_t> order = free;
  std::sort(order.begin(), order.end());
  for (size_t p : order) {
    const RunParameter& q = params[p];
    ps.push_back(q);
    vs.push_back(q.value(q.coordinate(q.prior) + q.sigma * u(static_cast<Eigen::Index>(p))));
  }
  return calibration_object(ps, vs, job, base, "calibrated");
}

}  // namespace trainsim::models::calibration
