#include "validator/report.hpp"

#include <algorithm>
#include <cstdio>

#include "models/collectives/alpha_beta.hpp"
#include "models/compute/compute_model.hpp"
#include "models/llm/layer_kernels.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/workload/run/simulate.hpp"

namespace trainsim::validator {

namespace calibration = models::calibration;

namespace {
using models::compute::ComputeModel;
using models::compute::Precision;

Precision precision_of(const calibration::Measurement& m) {
  return m.precision == "fp8" ? Precision::kFp8 : m.precision == "fp16" ? Precision::kFp16 : Precision::kBf16;
}

std::string detail_of(const calibration::Measurement& m) {
  char buf[160];
  switch (m.kind) {
    case calibration::OpKind::kGemm:
      std::snprintf(buf, sizeof buf, "%s %lldx%lldx%lld%s", m.precision.c_str(), static_cast<long long>(m.m),
                    static_cast<long long>(m.n), static_cast<long long>(m.k),
                    m.batch > 1 ? (" x" + std::to_string(m.batch)).c_str() : "");
      return buf;
    case calibration::OpKind::kAttentionFwd:
    case calibration::OpKind::kAttentionBwd:
    case calibration::OpKind::kLayer:
    case calibration::OpKind::kIteration: std::snprintf(buf, sizeof buf, "%.3f TFLOP", m.flops * 1e-12); return buf;
    case calibration::OpKind::kCollective:
      std::snprintf(buf, sizeof buf, "%s %.2f MiB on %d (%s)", m.op.c_str(), static_cast<double>(m.bytes) / 1048576.0,
                    m.ranks, m.link_class.c_str());
      return buf;
    case calibration::OpKind::kLaunch: return "per launch";
    default: std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(m.bytes) / 1048576.0); return buf;
  }
}

std::string pct(double x) {
  if (std::isnan(x)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * x);
  return buf;
}
std::string us(double s) {
  if (std::isnan(s)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s * 1e6);
  return buf;
}
}  // namespace

double predict(const calibration::Measurement& m, const models::hardware::GpuSpec& gpu,
               const models::hardware::ClusterSpec& c, const models::workload::Job& job) {
  switch (m.kind) {
    case calibration::OpKind::kGemm: {
      if (m.precision == "fp8" && gpu.peak_fp8.per_second() <= 0.0) return NAN;
      const ComputeModel cm(gpu, precision_of(m));
      return cm.gemm_matmul(models::compute::GemmShape{m.m, m.n, m.k, m.batch}).seconds();
    }
    case calibration::OpKind::kMemory:
    case calibration::OpKind::kCopyD2D:
      return ComputeModel(gpu, Precision::kBf16).memory_bound(sim::Bytes(m.bytes), std::max(1, m.kernels)).seconds();
    case calibration::OpKind::kAttentionFwd:
    case calibration::OpKind::kAttentionBwd:
      return ComputeModel(gpu, Precision::kBf16)
          .flash_attention(sim::Flops(m.flops), m.kind == calibration::OpKind::kAttentionBwd)
          .seconds();
    case calibration::OpKind::kLaunch: return gpu.kernel_launch.seconds();
    case calibration::OpKind::kCollective: {
      if (m.ranks < 2) return NAN;
      const models::collectives::AlphaBetaModel ab(c);
      const bool cross = m.link_class == "ib";
      if (m.op == "send_recv") return ab.p2p(sim::Bytes(m.bytes), cross).seconds();
      const int64_t per_node = cross ? std::min<int64_t>(m.ranks, c.gpus_per_node) : m.ranks;
      return ab
          .collective(models::collectives::parse_collective_op(m.op, "op"), sim::Bytes(m.bytes),
                      models::collectives::GroupPlacement{m.ranks, per_node})
          .seconds();
    }
    case calibration::OpKind::kLayer: {
      const models::llm::LayerShape shape{job.micro_batch, job.seq_len, job.tp, job.sp,
                                          job.attention == models::workload::Attention::kFlash};
      const ComputeModel cm(gpu, job.precision);
      return models::llm::kernels_cost(models::llm::layer_sequence(models::llm::layer_kernels(job.model, shape)), cm)
          .time.seconds();
    }
    case calibration::OpKind::kIteration: {
      // The whole simulated iteration of the job with these constants (one GPU: no communication).
      // The replay issues the kernels from trainsim's own runner, not a framework: no per-step
      // host time of the job's software stack.
      models::workload::Job j = job;
      j.gpu = gpu;
      j.cluster = c;
      j.stack.step_overhead = sim::Time::zero();
      return models::workload::simulate(j, models::workload::SimulateOptions{}).iteration.seconds();
    }
    case calibration::OpKind::kCopyH2D:
    case calibration::OpKind::kCopyD2H: return NAN;
  }
  return NAN;
}

Report make_report(const calibration::MeasurementSet& set, const models::workload::Job& job,
                   const models::hardware::GpuSpec& before, const models::hardware::ClusterSpec& cluster_before,
                   const models::hardware::GpuSpec& after, const models::hardware::ClusterSpec& cluster_after) {
  Report r;
  r.provenance = set.provenance;
  for (const calibration::Measurement& m : set.items) {
    ReportRow row;
    row.name = m.name;
    row.kind = m.kind;
    row.detail = detail_of(m);
    row.measured_s = m.measured_s;
    row.best_s = m.best_s;
    row.before_s = predict(m, before, cluster_before, job);
    row.after_s = predict(m, after, cluster_after, job);
    if (m.kind == calibration::OpKind::kCollective && m.measured_s > 0.0) {
      row.algbw_GBps = static_cast<double>(m.bytes) / m.measured_s * 1e-9;
      if (m.ranks > 1)
        row.busbw_GBps = row.algbw_GBps * models::collectives::bus_bandwidth_factor(
                                              models::collectives::parse_collective_op(m.op, "op"), m.ranks);
      char bw[64];
      if (m.ranks > 1)
        std::snprintf(bw, sizeof bw, ", busbw %.1f GB/s", row.busbw_GBps);
      else
        std::snprintf(bw, sizeof bw, ", algbw %.1f GB/s", row.algbw_GBps);
      row.detail += bw;
    }
    if (m.kind == calibration::OpKind::kGemm && m.best_s > 0.0) {
      const double gap = (m.measured_s - m.best_s) / m.best_s;
      r.gemm_default_vs_best_max =
          std::isnan(r.gemm_default_vs_best_max) ? gap : std::max(r.gemm_default_vs_best_max, gap);
    }
    r.rows.push_back(row);
  }
  for (int k = 0; k <= static_cast<int>(calibration::OpKind::kIteration); ++k) {
    std::vector<double> b, a;
    for (const ReportRow& row : r.rows) {
      if (static_cast<int>(row.kind) != k || std::isnan(row.before_s) || row.measured_s <= 0.0) continue;
      b.push_back(std::abs(row.error_before()));
      a.push_back(std::abs(row.error_after()));
    }
    if (b.empty()) continue;
    KindSummary s;
    s.kind = static_cast<calibration::OpKind>(k);
    s.count = static_cast<int>(b.size());
    s.median_abs_before = calibration::median(b);
    s.max_abs_before = *std::max_element(b.begin(), b.end());
    s.median_abs_after = calibration::median(a);
    s.max_abs_after = *std::max_element(a.begin(), a.end());
    r.kinds.push_back(s);
  }
  return r;
}

void print_report(std::ostream& out, const Report& r) {
  const calibration::Provenance& p = r.provenance;
  out << "measured on " << p.gpu_name << " (" << (p.gpu_preset.empty() ? "no preset" : p.gpu_preset) << "), " << p.gpus
      << " GPU(s), CUDA " << p.cuda_version << ", cuBLASLt " << p.cublas_version << ", NCCL " << p.nccl_version << ", "
      << p.date << "\n";
  if (!p.replay.empty()) out << "replayed: " << p.replay << "\n";
  if (!p.kernels.empty()) out << "kernels: " << p.kernels << "\n";
  out << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-26s %-14s %-46s %11s %11s %8s %11s %8s\n", "op", "kind", "shape / size",
                "measured us", "before us", "error", "after us", "error");
  out << line;
  for (const ReportRow& row : r.rows) {
    std::snprintf(line, sizeof line, "%-26s %-14s %-46s %11s %11s %8s %11s %8s\n", row.name.c_str(),
                  to_string(row.kind), row.detail.c_str(), us(row.measured_s).c_str(), us(row.before_s).c_str(),
                  pct(std::isnan(row.before_s) ? NAN : row.error_before()).c_str(), us(row.after_s).c_str(),
                  pct(std::isnan(row.after_s) ? NAN : row.error_after()).c_str());
    out << line;
  }
  out << "\nby kind (|error|: median / max)\n";
  for (const KindSummary& s : r.kinds) {
    std::snprintf(line, sizeof line, "  %-14s %3d ops   before %6s / %6s   after %6s / %6s\n", to_string(s.kind),
                  s.count, pct(s.median_abs_before).c_str(), pct(s.max_abs_before).c_str(),
                  pct(s.median_abs_after).c_str(), pct(s.max_abs_after).c_str());
    out << line;
  }
  if (!std::isnan(r.gemm_default_vs_best_max)) {
    std::snprintf(line, sizeof line, "\ncuBLASLt default algorithm vs best of the candidates: at most %s slower\n",
                  pct(r.gemm_default_vs_best_max).c_str());
    out << line;
  }
}

nlohmann::json report_json(const Report& r) {
  using nlohmann::json;
  auto num = [](double x) { return std::isnan(x) ? json(nullptr) : json(x); };
  json rows = json::array();
  for (const ReportRow& row : r.rows)
    rows.push_back({{"name", row.name},
                    {"kind", to_string(row.kind)},
                    {"detail", row.detail},
                    {"measured_s", row.measured_s},
                    {"best_s", row.best_s > 0.0 ? json(row.best_s) : json(nullptr)},
                    {"predicted_before_s", num(row.before_s)},
                    {"predicted_after_s", num(row.after_s)},
                    {"error_before", num(std::isnan(row.before_s) ? NAN : row.error_before())},
                    {"error_after", num(std::isnan(row.after_s) ? NAN : row.error_after())},
                    {"algbw_GBps", num(row.algbw_GBps)},
                    {"busbw_GBps", num(row.busbw_GBps)}});
  json kinds = json::array();
  for (const KindSummary& s : r.kinds)
    kinds.push_back({{"kind", to_string(s.kind)},
                     {"count", s.count},
                     {"median_abs_error_before", num(s.median_abs_before)},
                     {"max_abs_error_before", num(s.max_abs_before)},
                     {"median_abs_error_after", num(s.median_abs_after)},
                     {"max_abs_error_after", num(s.max_abs_after)}});
  return json{{"rows", rows}, {"kinds", kinds}, {"gemm_default_vs_best_max", num(r.gemm_default_vs_best_max)}};
}

}  // namespace trainsim::validator
