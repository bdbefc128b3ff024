#include "models/calibration/runs/run_fit.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <thread>

#include <Eigen/Dense>

#include "models/calibration/runs/run_solve.hpp"
#include "models/hardware/calibration.hpp"
#include "models/presets/catalog.hpp"
#include "models/stack/evidence.hpp"
#include "models/workload/job/job.hpp"
#include "models/workload/job/prediction_band.hpp"
#include "models/workload/run/simulate.hpp"

namespace trainsim::models::calibration {

using sim::config::Json;

namespace {

struct Eval {
  double metric = 0, iteration_s = 0, mfu = 0;
  bool fits = true;
  double peak_gib = 0, capacity_gib = 0;
  MemoryRun memory;  // the stages' memory as the allocator's reserve scales it (memory_fit.hpp)
};

Eval evaluate(const RunRecord& r, const Json& cal) {
  Json j = r.job;
  if (!cal.is_null()) j["calibration"] = cal;
  try {
    const workload::Job job = workload::resolve_job(workload::parse_job(j));
    workload::SimulateOptions once;
    once.route_threads = 1;  // the runs are already simulated on every thread (parallel_for)
    const workload::SimulationResult res = workload::simulate(job, once);
    Eval e;
    e.fits = res.fits;
    e.peak_gib = res.peak_memory().gib();
    e.memory.stack = job.stack.name;
    e.memory.prior = job.stack.memory.allocator_fragmentation;
    e.memory.measured_gib = r.peak_memory_gib.value_or(0.0);
    e.memory.capacity_gib = res.capacity.gib();
    for (const auto& st : res.stages)
      e.memory.stages.push_back(StagePeak{(st.memory.allocated() + st.memory.framework).gib(),
                                          (st.memory.activations + st.memory.buffers).gib()});
    e.capacity_gib = res.capacity.gib();
    e.iteration_s = res.iteration.seconds();
    e.mfu = res.mfu;
    if (res.fits)
      e.metric = predicted_metric(r, res.tokens_per_s / static_cast<double>(job.gpus), res.iteration.seconds(),
                                  res.model_tflops_per_gpu, res.mfu);
    return e;
  } catch (const ConfigError& e) {
    throw ConfigError(r.path + " (" + r.id + ")." + e.path(), e.message(), e.hint());
  }
}

// f(i) for i in [0, n) on `threads` threads; the first exception (lowest index) is rethrown.
template <typename F>
void parallel_for(size_t n, int threads, F f) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        f(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, threads); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// Runs of the same job and measured quantity.
std::string r_key(const RunRecord& r) { return r.job.dump() + "|" + to_string(r.metric); }

// log(predicted throughput / measured throughput).
double log_gain(const RunRecord& r, double predicted) { return std::log1p(throughput_error(r, predicted)); }

// The calibration the runs already use (the command line's --calibration: a validator's or Kineto's
// kernel fit), as an object; null when none. Its constants are the priors, and the result keeps
// them beside the fitted ones, so one file holds kernel and end-to-end evidence together.
Json base_calibration(const std::vector<RunRecord>& runs) {
  const auto ref = [](const RunRecord& r) { return r.job.contains("calibration") ? r.job.at("calibration") : Json(); };
  const Json first = ref(runs.front());
  for (const auto& r : runs)
    if (ref(r) != first)
      throw ConfigError(r.path + " (" + r.id + ").calibration", "differs from " + runs.front().id + "'s",
                        "calibrate from one base calibration: give it with --calibration for every run");
  if (first.is_null()) return first;
  Json base = first.is_string() ? presets::resolve("calibrations", first.get<std::string>(), "calibration") : first;
  (void)hardware::parse_calibration(base, "calibration");
  return base;
}

// The jobs resolved at the presets: one GPU and one cluster for the whole file. With
// skip_unusable, runs whose job does not resolve are dropped with a note.
std::vector<workload::Job> resolve_all(std::vector<RunRecord>& runs, bool skip_unusable,
                                       std::vector<std::string>& notes) {
  std::vector<workload::Job> jobs;
  std::vector<RunRecord> kept;
  for (auto& r : runs) {
    try {
      jobs.push_back(workload::resolve_job(workload::parse_job(r.job)));
    } catch (const ConfigError& e) {
      if (!skip_unusable) throw ConfigError(r.path + " (" + r.id + ")." + e.path(), e.message(), e.hint());
      notes.push_back("skipped " + r.path + " (" + r.id + "): " + e.path() + ": " + e.message());
      continue;
    }
    kept.push_back(std::move(r));
    const auto& j = jobs.back();
    if (j.gpu.name != jobs.front().gpu.name || j.cluster.name != jobs.front().cluster.name)
      throw ConfigError(kept.back().path + " (" + kept.back().id + ")",
                        "runs on " + j.gpu.name + " (" + j.cluster.name + ") but " + kept.front().id + " on " +
                            jobs.front().gpu.name + " (" + jobs.front().cluster.name + ")",
                        "calibrate one GPU and cluster at a time: --only TEXT keeps the runs whose id or source "
                        "contains TEXT, --cluster sets the cluster of every run");
  }
  if (kept.empty()) throw ConfigError("runs", "holds no run trainsim can simulate", "see the skipped runs' errors");
  runs = std::move(kept);
  return jobs;
}

}  // namespace

namespace {

// One fit's state, phase by phase (the numbered steps of run_fit.hpp).
struct Fit {
  const RunFitOptions& options;
  std::vector<RunRecord> runs;
  RunFitResult out;
  std::vector<workload::Job> jobs;
  Json base_cal;
  std::vector<RunParameter> params;
  size_t n = 0, k = 0, m = 0;
  std::vector<Eval> base, at;
  std::vector<size_t> used;  // runs that fit in memory: the rows of z and g
  std::vector<int> informed;
  Eigen::MatrixXd z;  // d log(throughput) per prior width
  Eigen::VectorXd g;  // log throughput errors at u
  Eigen::VectorXd u;  // the constants, prior widths from their priors
  Selection sel;
  Solution sol;
  std::vector<double> err_cv;
};

// 1. The presets' predictions; runs that do not fit and contradictory runs are noted.
void predict_presets(Fit& f) {
  auto& out = f.out;
  auto& runs = f.runs;
  const size_t n = f.n;
  f.base.resize(n);
  parallel_for(n, f.options.threads, [&](size_t i) { f.base[i] = evaluate(runs[i], Json()); });
  out.simulations += n;
  out.outcomes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    auto& o = out.outcomes[i];
    o.fits = f.base[i].fits;
    o.peak_gib = f.base[i].peak_gib;
    o.capacity_gib = f.base[i].capacity_gib;
    if (!o.fits) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "needs %.1f of %.1f GiB as simulated", f.base[i].peak_gib, f.base[i].capacity_gib);
      out.notes.push_back(runs[i].path + " (" + runs[i].id + ") does not fit in memory (" + buf +
                          "): left out of the fit; it ran, so the memory model is off for this job");
      continue;
    }
    o.before = f.base[i].metric;
    o.error_before = throughput_error(runs[i], o.before);
    f.used.push_back(i);
  }
  // Contradictory runs: the same job measured far apart.
  std::map<std::string, std::vector<size_t>> same;
  for (size_t i = 0; i < n; ++i) same[r_key(runs[i])].push_back(i);
  for (const auto& [key, idx] : same) {
    if (idx.size() < 2) continue;
    double lo = 1e300, hi = 0;
    for (size_t i : idx) lo = std::min(lo, runs[i].measured), hi = std::max(hi, runs[i].measured);
    if (hi > 1.5 * lo) {
      std::string ids;
      for (size_t i : idx) ids += (ids.empty() ? "" : ", ") + runs[i].id;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.2fx", hi / lo);
      out.notes.push_back("contradictory runs: " + ids + " are the same job measured " + buf +
                          " apart; the robust fit weighs the outlier down");
    }
  }
  if (f.used.empty())
    throw ConfigError(runs.front().path, "no run fits in memory as simulated, so none can be fitted",
                      "check the runs' parallel configurations and the --stack (its memory conventions)");
  f.m = f.used.size();
}

// 2. Sensitivities: d log(throughput) per prior width, from a nudged simulation per constant;
// the per-step overhead's is exact without one (the optimizer step that holds it closes the
// iteration on every rank: workload/dag/builder.cpp), and a stack's GEMM scale is the GPU's
// GEMM efficiency's (below).
void sensitivities(Fit& f) {
  auto& out = f.out;
  const auto& runs = f.runs;
  const auto& params = f.params;
  const auto& used = f.used;
  const auto& base = f.base;
  const size_t m = f.m, k = f.k;
  auto& z = f.z;
  z = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(k));
  std::vector<std::pair<size_t, size_t>> nudges;  // (row in used, parameter)
  f.informed.assign(k, 0);
  for (size_t r = 0; r < m; ++r)
    for (size_t p = 0; p < k; ++p)
      if (informs(params[p], f.jobs[used[r]])) {
        ++f.informed[p];
        if (params[p].name == "step_overhead")
          z(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(p)) = -params[p].sigma / base[used[r]].iteration_s;
        else if (params[p].name != "kernels.gemm_scale")
          nudges.emplace_back(r, p);
      }
  std::vector<double> nudged(nudges.size()), steps(nudges.size());
  parallel_for(nudges.size(), f.options.threads, [&](size_t t) {
    const auto [r, p] = nudges[t];
    const RunParameter& q = params[p];
    double h = q.log_scale ? 0.1 : q.sigma;
    const double x0 = q.coordinate(q.prior);
    if (q.value(x0 + h) >= q.hi) h = -h;
    steps[t] = q.value(x0 + h) - q.prior;
    const Json cal = calibration_object({q}, {q.value(x0 + h)}, f.jobs[used[r]], f.base_cal, "nudge");
    const Eval e = evaluate(runs[used[r]], cal);
    nudged[t] = e.fits ? e.metric : base[used[r]].metric;
  });
  out.simulations += nudges.size();
  for (size_t t = 0; t < nudges.size(); ++t) {
    const auto [r, p] = nudges[t];
    const RunParameter& q = params[p];
    const double dc = q.coordinate(q.prior + steps[t]) - q.coordinate(q.prior);
    if (dc == 0) continue;
    const RunRecord& run = runs[used[r]];
    const double d = log_gain(run, nudged[t]) - log_gain(run, base[used[r]].metric);
    z(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(p)) = d / dc * q.sigma;
  }
  // A stack's GEMM scale multiplies the GPU's gemm_efficiency (workload/job/stack.cpp): on that
  // stack's runs its log-sensitivity is gemm_efficiency's, with no simulation of its own.
  const auto gemm =
      std::find_if(params.begin(), params.end(), [](const RunParameter& q) { return q.name == "gemm_efficiency"; });
  for (size_t p = 0; p < k; ++p) {
    if (params[p].name != "kernels.gemm_scale" || gemm == params.end()) continue;
    const auto g_col = static_cast<Eigen::Index>(gemm - params.begin());
    for (size_t r = 0; r < m; ++r)
      if (informs(params[p], f.jobs[used[r]]))
        z(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(p)) =
            z(static_cast<Eigen::Index>(r), g_col) / gemm->sigma * params[p].sigma;
  }
}

// 3. The robust MAP fit of the chosen constants, stepped with simulations.
void fit_steps(Fit& f) {
  auto& out = f.out;
  const auto& runs = f.runs;
  const auto& params = f.params;
  const auto& used = f.used;
  const size_t m = f.m, n = f.n;
  auto& z = f.z;
  auto& g = f.g;
  auto& u = f.u;
  auto& at = f.at;
  at.resize(n);
  // The runs are simulated at the fitted constants. A step moves no constant by more than the trust
  // radius (3 prior widths at first); each simulated step corrects the sensitivities along it (a
  // secant, Broyden, update), and a step that makes the runs' robust loss worse is taken back with
  // the radius halved. Settled when the simulation agrees with the linear prediction within 2 % on
  // every run (at most 6 simulated steps).
  constexpr int kMaxPasses = 6;
  double radius = 3.0;
  for (size_t r = 0; r < m; ++r) at[used[r]] = f.base[used[r]];
  std::vector<double> start_abs(m);
  for (size_t r = 0; r < m; ++r) start_abs[r] = std::abs(g(static_cast<Eigen::Index>(r)));
  const double huber_c = kHuberK * robust_scale(start_abs);
  auto loss = [&](const Eigen::VectorXd& e) { return huber_loss(e, huber_c); };
  double current = loss(g);
  bool settled = f.sel.free.empty();
  std::vector<Eval> trial(n);
  for (int pass = 0; pass < kMaxPasses && !settled; ++pass) {
    std::vector<size_t> rows(m);
    for (size_t r = 0; r < m; ++r) rows[r] = r;
    f.sol = solve_map(z, g, u, f.sel.free, params, rows);
    Eigen::VectorXd step = f.sol.u - u;
    const double longest = step.cwiseAbs().maxCoeff();
    if (longest <= 1e-9) {
      settled = true;
      break;
    }
    const bool limited = longest > radius;
    if (limited) step *= radius / longest;
    const Eigen::VectorXd linear = g + z * step;
    const Json cal = fitted_calibration(params, u + step, f.jobs.front(), f.sel.free, f.base_cal);
    parallel_for(m, f.options.threads, [&](size_t r) { trial[used[r]] = evaluate(runs[used[r]], cal); });
    out.simulations += m;
    Eigen::VectorXd g_new = g;
    for (size_t r = 0; r < m; ++r)
      g_new(static_cast<Eigen::Index>(r)) =
          trial[used[r]].fits ? log_gain(runs[used[r]], trial[used[r]].metric) : linear(static_cast<Eigen::Index>(r));
    z += ((g_new - g) - z * step) * step.transpose() / step.squaredNorm();
    const double after = loss(g_new);
    if (after > current) {
      radius *= 0.5;
      continue;
    }
    settled = !limited && (g_new - linear).cwiseAbs().maxCoeff() < 0.02;
    u += step;
    g = g_new;
    current = after;
    for (size_t r = 0; r < m; ++r) at[used[r]] = trial[used[r]];
  }
  if (!settled)
    out.notes.push_back("the fit did not settle in " + std::to_string(kMaxPasses) +
                        " simulated steps: the constants are where the last step left them, and the "
                        "leave-one-out errors are linearised from there");
}

// 4. Leave-one-out at the final point, the constant-MFU baseline, and the fit's acceptance.
void leave_one_out(Fit& f) {
  auto& out = f.out;
  const auto& runs = f.runs;
  const auto& params = f.params;
  const auto& used = f.used;
  const auto& base = f.base;
  const size_t m = f.m;
  auto& sel = f.sel;
  const auto& z = f.z;
  const auto& g = f.g;
  auto& u = f.u;
  auto& at = f.at;
  auto& err_cv = f.err_cv;
  // 4. Leave-one-out at the final point: what leaving a run out changes in the linearised fit
  // (against the same fit with every run, so that a fit that has not settled is not credited with
  // the linear model's further step), applied to the run's simulated error there.
  std::vector<double> err_before, err_after;
  std::vector<size_t> all_rows(m);
  for (size_t r = 0; r < m; ++r) all_rows[r] = r;
  const Eigen::VectorXd u_all = sel.free.empty() ? u : solve_map(z, g, u, sel.free, params, all_rows).u;
  for (size_t r = 0; r < m; ++r) {
    std::vector<size_t> rows;
    for (size_t q = 0; q < m; ++q)
      if (q != r) rows.push_back(q);
    const Eigen::VectorXd u_cv =
        rows.empty() || sel.free.empty() ? u_all : solve_map(z, g, u, sel.free, params, rows).u;
    const auto ri = static_cast<Eigen::Index>(r);
    const double g_cv = g(ri) + z.row(ri).dot(u_cv - u_all);
    auto& o = out.outcomes[used[r]];
    const RunRecord& run = runs[used[r]];
    o.after = at[used[r]].metric;
    o.error_after = std::expm1(g(ri));
    o.error_cv = std::expm1(g_cv);
    o.cv =
        run.metric == RunMetric::kIterationTime ? run.measured / (1.0 + o.error_cv) : run.measured * (1.0 + o.error_cv);
    err_before.push_back(o.error_before);
    err_after.push_back(o.error_after);
    err_cv.push_back(o.error_cv);
  }
  out.used = m;
  // The constant-MFU baseline: a run's measured MFU is the predicted one over its throughput ratio.
  std::vector<double> measured_mfu(m), err_mfu;
  for (size_t r = 0; r < m; ++r) measured_mfu[r] = base[used[r]].mfu / (1.0 + out.outcomes[used[r]].error_before);
  for (size_t r = 0; r < m && m > 1; ++r) {
    std::vector<double> others;
    for (size_t q = 0; q < m; ++q)
      if (q != r) others.push_back(measured_mfu[q]);
    err_mfu.push_back(median(others) / measured_mfu[r] - 1.0);
  }
  out.median_constant_mfu = median_abs(err_mfu);
  out.median_before = median_abs(err_before);
  out.median_after = median_abs(err_after);
  out.median_cv = median_abs(err_cv);
  // A fit that does not predict unseen runs better than the presets is not kept: the runs are
  // off by something no constant scales (a mechanism), and the presets stay.
  if (!sel.free.empty() && out.median_cv >= out.median_before) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "%.1f%% median leave-one-out error, presets %.1f%%", 100.0 * out.median_cv,
                  100.0 * out.median_before);
    for (size_t p : sel.free)
      sel.why[p] = std::string("kept: fitting it did not predict left-out runs better (") + buf + ")";
    out.notes.erase(std::remove_if(out.notes.begin(), out.notes.end(),
                                   [](const std::string& n) { return n.rfind("the fit did not settle", 0) == 0; }),
                    out.notes.end());
    out.notes.push_back(std::string("no constant kept: the fit predicted left-out runs worse than the presets (") +
                        buf + "); these runs differ from the model by more than its constants absorb");
    sel.free.clear();
    u.setZero();
    for (size_t r = 0; r < m; ++r) {
      auto& o = out.outcomes[used[r]];
      at[used[r]] = base[used[r]];
      o.after = o.cv = o.before;
      o.error_after = o.error_cv = o.error_before;
      err_cv[r] = o.error_before;
    }
    out.median_after = out.median_cv = out.median_before;
  }
  out.band = stack::error_band(err_cv);
}

// 5. The constants, their uncertainty, and the calibration file.
void write_calibration(Fit& f) {
  auto& out = f.out;
  const auto& runs = f.runs;
  const auto& params = f.params;
  const auto& jobs = f.jobs;
  const auto& base_cal = f.base_cal;
  const auto& options = f.options;
  const auto& sel = f.sel;
  const auto& sol = f.sol;
  const auto& u = f.u;
  const size_t n = f.n, k = f.k, m = f.m;
  for (size_t p = 0; p < k; ++p) {
    FittedConstant c;
    c.param = params[p];
    c.runs = f.informed[p];
    const auto pi = static_cast<Eigen::Index>(p);
    c.fitted = std::find(sel.free.begin(), sel.free.end(), p) != sel.free.end();
    const double x = params[p].coordinate(params[p].prior) + params[p].sigma * u(pi);
    c.value = c.fitted ? params[p].value(x) : params[p].prior;
    c.note = c.fitted ? (sol.at_bound[p] ? "at its bound" : "") : sel.why[p];
    if (c.fitted && !sol.at_bound[p]) {
      const double sd = params[p].sigma * sol.sd(pi);
      c.uncertainty = params[p].log_scale ? c.value * sd : sd;
    }
    out.constants.push_back(c);
  }
  out.calibration = fitted_calibration(params, u, jobs.front(), sel.free, base_cal);
  out.calibration["name"] = options.name;
  const Json base_fit = base_cal.is_object() && base_cal.contains("fit") ? base_cal.at("fit") : Json();
  out.calibration["description"] = options.description.empty()
                                       ? "Fitted by trainsim calibrate to " + std::to_string(m) + " logged runs on " +
                                             jobs.front().gpu.name + " (" + jobs.front().cluster.name + ")"
                                       : options.description;
  if (base_cal.is_object() && options.description.empty())
    out.calibration["description"] = out.calibration["description"].get<std::string>() + ", over calibration " +
                                     base_cal.value("name", std::string("(unnamed)"));
  Json sources = base_cal.is_object() && base_cal.contains("sources") ? base_cal.at("sources") : Json::object();
  for (const auto& c : out.constants) {
    if (!c.fitted) continue;
    char buf[200];
    std::snprintf(buf, sizeof buf, "trainsim calibrate: fitted to %zu runs (prior %.4g, fitted %.4g +- %.2g)", m,
                  c.param.prior, c.value, c.uncertainty);
    sources[c.param.label()] = buf;
  }
  out.calibration["sources"] = sources;
  out.calibration["error"] = Json{{"band", std::round(out.band * 1e4) / 1e4},
                                  {"runs", static_cast<int64_t>(m)},
                                  {"method", "leave-one-out, 68th percentile of |error|"}};
  std::vector<workload::Job> used_jobs;
  for (size_t i : f.used) used_jobs.push_back(jobs[i]);
  stack::Evidence e = workload::evidence_of(used_jobs);
  e.gpu_presets.clear();  // the calibration's own `gpu`
  // The base calibration's kernel ranges stay: its constants hold where its kernels were measured.
  if (base_cal.is_object() && base_cal.contains("evidence")) {
    const stack::Evidence k = stack::parse_evidence(base_cal.at("evidence"), "calibration.evidence");
    e.gemm_m = k.gemm_m, e.gemm_n = k.gemm_n, e.gemm_k = k.gemm_k, e.message_bytes = k.message_bytes;
  }
  out.calibration["evidence"] = stack::to_json(e);
  Json fit_runs = Json::array(), fit_constants = Json::array();
  for (size_t i = 0; i < n; ++i) {
    const auto& o = out.outcomes[i];
    Json row{
        {"id", runs[i].id}, {"metric", to_string(runs[i].metric)}, {"measured", runs[i].measured}, {"fits", o.fits}};
    if (o.fits) {
      row["error_before"] = std::round(o.error_before * 1e4) / 1e4;
      row["error_after"] = std::round(o.error_after * 1e4) / 1e4;
      row["error_cv"] = std::round(o.error_cv * 1e4) / 1e4;
    }
    fit_runs.push_back(row);
  }
  for (const auto& c : out.constants)
    fit_constants.push_back(Json{{"name", c.param.label()},
                                 {"target", c.param.target},
                                 {"prior", c.param.prior},
                                 {"value", c.value},
                                 {"uncertainty", c.uncertainty},
                                 {"fitted", c.fitted},
                                 {"runs", c.runs},
                                 {"note", c.note}});
  out.calibration["fit"] = Json{{"method", "trainsim calibrate (models/calibration/runs/run_fit.hpp)"},
                                {"median_error_before", std::round(out.median_before * 1e4) / 1e4},
                                {"median_error_after", std::round(out.median_after * 1e4) / 1e4},
                                {"median_error_cv", std::round(out.median_cv * 1e4) / 1e4},
                                {"median_error_constant_mfu", std::round(out.median_constant_mfu * 1e4) / 1e4},
                                {"constants", fit_constants},
                                {"runs", fit_runs},
                                {"notes", out.notes}};
  if (!base_fit.is_null())
    out.calibration["fit"]["base"] = Json{{"name", base_cal.value("name", "")}, {"fit", base_fit}};
}

}  // namespace

RunFitResult fit_runs(std::vector<RunRecord> runs, const RunFitOptions& options) {
  Fit f{options, std::move(runs), {}, {}, {}, {}, 0, 0, 0, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  f.jobs = resolve_all(f.runs, options.skip_unusable, f.out.notes);
  f.base_cal = base_calibration(f.runs);
  f.params = run_parameters(f.jobs);
  f.n = f.runs.size();
  f.k = f.params.size();
  predict_presets(f);
  sensitivities(f);
  f.g = Eigen::VectorXd(static_cast<Eigen::Index>(f.m));
  for (size_t r = 0; r < f.m; ++r)
    f.g(static_cast<Eigen::Index>(r)) = log_gain(f.runs[f.used[r]], f.base[f.used[r]].metric);
  f.sel = select_constants(f.z, f.g, f.params, f.informed);
  f.u = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(f.k));
  fit_steps(f);
  leave_one_out(f);
  write_calibration(f);
  std::vector<MemoryRun> memory;
  std::vector<std::string> ids;
  for (size_t i = 0; i < f.n; ++i) memory.push_back(f.base[i].memory), ids.push_back(f.runs[i].id);
  f.out.memory = fit_memory(memory);
  write_memory_fit(f.out.calibration, f.out.memory, ids);
  f.out.runs = std::move(f.runs);
  return std::move(f.out);
}

}  // namespace trainsim::models::calibration
