#include "validator/report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "models/compute/compute_model.hpp"
#include "models/llm/layer_kernels.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/workload/job/job.hpp"

namespace trainsim::validator {
namespace {

namespace calibration = models::calibration;

models::workload::Job job_70b_tp8() {
  return models::workload::resolve_job(models::workload::parse_job(nlohmann::json{{"model", "llama3-70b"},
                                                                                  {"cluster", "dgx-h100"},
                                                                                  {"gpus", 8},
                                                                                  {"tp", 8},
                                                                                  {"global_batch", 1},
                                                                                  {"seq_len", 8192}}));
}

calibration::Measurement gemm(int64_t m, int64_t n, int64_t k, const std::string& precision, double t) {
  calibration::Measurement r;
  r.name = "g";
  r.kind = calibration::OpKind::kGemm;
  r.m = m;
  r.n = n;
  r.k = k;
  r.precision = precision;
  r.flops = 2.0 * static_cast<double>(m * n * k);
  r.measured_s = t;
  return r;
}

TEST(Predict, EachKindUsesTheSimulatorsFormula) {
  const auto job = job_70b_tp8();
  const models::compute::ComputeModel bf16(job.gpu, models::compute::Precision::kBf16);
  const models::compute::ComputeModel fp8(job.gpu, models::compute::Precision::kFp8);
  const models::compute::GemmShape s{8192, 1280, 8192, 1};
  EXPECT_DOUBLE_EQ(predict(gemm(8192, 1280, 8192, "bf16", 1e-3), job.gpu, job.cluster, job), bf16.gemm(s).seconds());
  // An fp8 GEMM microbenchmark times the matrix product alone: no cast kernel in its prediction.
  EXPECT_DOUBLE_EQ(predict(gemm(8192, 1280, 8192, "fp8", 1e-3), job.gpu, job.cluster, job),
                   fp8.gemm_matmul(s).seconds());
  EXPECT_LT(fp8.gemm_matmul(s), fp8.gemm(s));

  calibration::Measurement mem;
  mem.kind = calibration::OpKind::kMemory;
  mem.bytes = 1 << 28;
  mem.kernels = 2;
  EXPECT_DOUBLE_EQ(predict(mem, job.gpu, job.cluster, job), bf16.memory_bound(sim::Bytes(1 << 28), 2).seconds());

  calibration::Measurement host;
  host.kind = calibration::OpKind::kCopyH2D;
  host.bytes = 1 << 28;
  EXPECT_TRUE(std::isnan(predict(host, job.gpu, job.cluster, job)));  // no model of the host link

  calibration::Measurement local;
  local.kind = calibration::OpKind::kCollective;
  local.op = "all_reduce";
  local.bytes = 1 << 20;
  local.ranks = 1;
  local.link_class = "local";
  EXPECT_TRUE(std::isnan(predict(local, job.gpu, job.cluster, job)));  // one GPU calibrates no link
  local.ranks = 8;
  local.link_class = "nvlink";
  EXPECT_GT(predict(local, job.gpu, job.cluster, job), 0.0);
}

TEST(Predict, LayerIsTheSumOfItsKernels) {
  const auto job = job_70b_tp8();
  calibration::Measurement layer;
  layer.kind = calibration::OpKind::kLayer;
  const models::llm::LayerShape shape{1, 8192, 8, true, true};
  const models::compute::ComputeModel cm(job.gpu, job.precision);
  const auto seq = models::llm::layer_sequence(models::llm::layer_kernels(job.model, shape));
  double sum = 0.0;
  for (const auto& k : seq) sum += models::llm::kernel_cost(k, cm).time.seconds();
  EXPECT_NEAR(predict(layer, job.gpu, job.cluster, job), sum, 1e-9);
  // Every kernel of the layer is in the sequence once: 2 blocks x (2 pre + 2 pre_bwd) memory ops,
  // 4 GEMMs x 3, rope fwd/bwd, attention fwd/bwd, activation fwd/bwd.
  EXPECT_EQ(seq.size(), 8u + 12u + 2u + 2u + 2u);
}

TEST(Report, ErrorsBeforeAndAfterPerKind) {
  const auto job = job_70b_tp8();
  models::hardware::GpuSpec after = job.gpu;
  after.gemm_efficiency = job.gpu.gemm_efficiency * 0.9;  // a slower GPU than the preset says
  calibration::MeasurementSet set;
  // Measured exactly what the "after" constants predict.
  calibration::Measurement g = gemm(8192, 1280, 8192, "bf16", 0.0);
  g.measured_s = predict(g, after, job.cluster, job);
  g.best_s = g.measured_s * 0.98;
  set.items.push_back(g);
  const Report r = make_report(set, job, job.gpu, job.cluster, after, job.cluster);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_LT(r.rows[0].error_before(), -0.05);  // the preset is optimistic for this GPU
  EXPECT_NEAR(r.rows[0].error_after(), 0.0, 1e-12);
  ASSERT_EQ(r.kinds.size(), 1u);
  EXPECT_EQ(r.kinds[0].kind, calibration::OpKind::kGemm);
  EXPECT_NEAR(r.gemm_default_vs_best_max, 1.0 / 0.98 - 1.0, 1e-12);
  std::ostringstream text;
  print_report(text, r);
  EXPECT_NE(text.str().find("gemm"), std::string::npos);
  const auto j = report_json(r);
  EXPECT_NEAR(j["rows"][0]["error_after"].get<double>(), 0.0, 1e-12);
  EXPECT_TRUE(j["rows"][0]["predicted_before_s"].is_number());
}

TEST(Report, CollectivesShowNcclTestsBandwidths) {
  const auto job = job_70b_tp8();
  calibration::MeasurementSet set;
  calibration::Measurement c;
  c.name = "ar";
  c.kind = calibration::OpKind::kCollective;
  c.op = "all_reduce";
  c.bytes = int64_t{1} << 30;
  c.ranks = 8;
  c.link_class = "nvlink";
  c.measured_s = 0.005;
  set.items.push_back(c);
  c.ranks = 1;
  c.link_class = "local";
  set.items.push_back(c);
  const Report r = make_report(set, job, job.gpu, job.cluster, job.gpu, job.cluster);
  const double algbw = static_cast<double>(int64_t{1} << 30) / 0.005 * 1e-9;
  EXPECT_NEAR(r.rows[0].algbw_GBps, algbw, 1e-9);
  EXPECT_NEAR(r.rows[0].busbw_GBps, algbw * 2.0 * 7.0 / 8.0, 1e-9);  // nccl-tests: 2(n-1)/n
  EXPECT_NE(r.rows[0].detail.find("busbw 375.8 GB/s"), std::string::npos) << r.rows[0].detail;
  EXPECT_TRUE(std::isnan(r.rows[1].busbw_GBps));
  EXPECT_NE(r.rows[1].detail.find("algbw 214.7 GB/s"), std::string::npos) << r.rows[1].detail;
}

}  // namespace
}  // namespace trainsim::validator
