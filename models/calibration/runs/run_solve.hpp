#pragma once
// The linear algebra of the run fit (run_fit.hpp): which constants the runs can identify, and the
// robust maximum-a-posteriori step in prior-width units.

#include <string>
#include <vector>

#include <Eigen/Dense>

#include "models/calibration/measurement.hpp"
#include "models/calibration/runs/run_parameters.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::models::calibration {

// The run-to-run noise of a logged throughput, in log units: what the data term of the fit is
// weighed by against the priors. 3 %, an engineering estimate: repeated runs of one configuration
// in the published tables and the dev sets agree to a few percent.
inline constexpr double kRunNoise = 0.03;

// The robust spread of residuals whose absolute values are `abs`: 1.4826 times their median (the
// standard deviation for normal errors), at least kRunNoise. Residuals beyond 1.345 times it are
// weighed down (Huber's threshold for 95 % efficiency under normal errors).
double robust_scale(const std::vector<double>& abs);
inline constexpr double kHuberK = 1.345;
// The Huber loss of `e` with threshold c: squares below c, linear beyond.
double huber_loss(const Eigen::VectorXd& e, double c);

struct Selection {
  std::vector<size_t> free;      // fitted constants, in the order chosen
  std::vector<std::string> why;  // per constant: why it is kept ("" when fitted)
};

// z: runs x constants, d log(throughput) per prior width; g: the runs' log throughput errors at
// the priors; informed: runs each constant can change. Forward stepwise: the constant whose fit
// cuts the squared errors most joins while it cuts them by the information criterion's price of
// a parameter, up to max(1, runs / 3).
Selection select_constants(const Eigen::MatrixXd& z, const Eigen::VectorXd& g, const std::vector<RunParameter>& params,
                           const std::vector<int>& informed);

struct Solution {
  Eigen::VectorXd u;           // every constant, prior widths from its prior (kept ones: 0)
  Eigen::VectorXd sd;          // posterior standard deviation, prior widths (free, not at a bound)
  std::vector<bool> at_bound;  // per constant
  double scale = 0;            // the residuals' robust scale (log units)
};

// Minimises sum_i huber(g_i + z_i (u - u0)) / s^2 + |u|^2 over the free constants, from the
// linearisation point u0 with log gains g there, using `rows` of z and g only.
Solution solve_map(const Eigen::MatrixXd& z, const Eigen::VectorXd& g, const Eigen::VectorXd& u0,
                   const std::vector<size_t>& free, const std::vector<RunParameter>& params,
                   const std::vector<size_t>& rows);

// The calibration object with the free constants at prior + sigma * u, over `base` (a calibration
// object the runs already use, or null).
sim::config::Json fitted_calibration(const std::vector<RunParameter>& params, const Eigen::VectorXd& u,
                                     const workload::Job& job, const std::vector<size_t>& free,
                                     const sim::config::Json& base);

}  // namespace trainsim::models::calibration
