// Operator classes (traces/kineto/ops.*): shapes from "Input Dims", precision from "Input type",
// attention FLOPs, memory-bound bytes, collectives, and the compute model's prices.
#include "traces/kineto/ops.hpp"

#include <gtest/gtest.h>

#include "models/hardware/gpu_spec.hpp"
#include "models/presets/catalog.hpp"
#include "tests/unit/traces/kineto_test_job.hpp"

namespace trainsim::traces {
namespace {

KinetoOp op(const std::string& name, std::vector<std::vector<int64_t>> dims, std::vector<std::string> types) {
  KinetoOp o;
  o.name = name;
  o.input_dims = std::move(dims);
  o.input_types = std::move(types);
  return o;
}

const std::string kBf16 = "c10::BFloat16";

TEST(KinetoOps, GemmShapesOfTheAtenMatrixProducts) {
  const KinetoTrace none;
  OpInfo i = classify_op(op("aten::mm", {{2048, 1024}, {1024, 4096}}, {kBf16, kBf16}), none);
  ASSERT_EQ(i.cls, OpClass::kGemm);
  EXPECT_EQ(i.gemm.m, 2048);
  EXPECT_EQ(i.gemm.n, 4096);
  EXPECT_EQ(i.gemm.k, 1024);
  EXPECT_EQ(i.precision, "bf16");
  EXPECT_DOUBLE_EQ(i.flops, 2.0 * 2048 * 4096 * 1024);
  // addmm: bias first.
  i = classify_op(op("aten::addmm", {{4096}, {8, 64}, {64, 4096}, {}, {}}, {"c10::Half", "c10::Half", "c10::Half"}),
                  none);
  EXPECT_EQ(i.cls, OpClass::kGemm);
  EXPECT_EQ(i.gemm.m, 8);
  EXPECT_EQ(i.precision, "fp16");
  // bmm and baddbmm: batched.
  i = classify_op(op("aten::bmm", {{16, 128, 64}, {16, 64, 256}}, {kBf16, kBf16}), none);
  EXPECT_EQ(i.gemm.batch, 16);
  EXPECT_EQ(i.gemm.n, 256);
  // linear: every leading dimension of the input is M; the weight is [out, in].
  i = classify_op(op("aten::linear", {{4, 512, 1024}, {4096, 1024}, {4096}}, {kBf16, kBf16, kBf16}), none);
  EXPECT_EQ(i.gemm.m, 2048);
  EXPECT_EQ(i.gemm.n, 4096);
  EXPECT_EQ(i.gemm.k, 1024);
  // matmul with a 2-d right operand folds the batch into M; with equal ranks it is batched.
  i = classify_op(op("aten::matmul", {{2, 3, 5}, {5, 7}}, {kBf16, kBf16}), none);
  EXPECT_EQ(i.gemm.m, 6);
  EXPECT_EQ(i.gemm.batch, 1);
  i = classify_op(op("aten::matmul", {{2, 3, 5}, {2, 5, 7}}, {kBf16, kBf16}), none);
  EXPECT_EQ(i.gemm.batch, 2);
  EXPECT_EQ(i.gemm.m, 3);
  // fp32 GEMMs are not priced (no fp32 tensor-core model); inconsistent dims are not GEMMs.
  i = classify_op(op("aten::mm", {{8, 8}, {8, 8}}, {"float", "float"}), none);
  EXPECT_EQ(i.cls, OpClass::kOther);
  EXPECT_EQ(i.note, "fp32 GEMM");
  EXPECT_NE(classify_op(op("aten::mm", {{8, 4}, {8, 8}}, {kBf16, kBf16}), none).cls, OpClass::kGemm);
}

TEST(KinetoOps, AttentionFlopsAreCausalAndTheBackwardIsTwoAndAHalfTimes) {
  const KinetoTrace none;
  // SDPA layout [b, h, s, d]: 2*b*h*sq*skv*d (half of QK^T + PV).
  OpInfo f = classify_op(op("aten::_scaled_dot_product_flash_attention",
                            {{4, 16, 512, 64}, {4, 4, 512, 64}, {4, 4, 512, 64}, {}, {}, {}, {}},
                            {kBf16, kBf16, kBf16, "Scalar", "Scalar", "Scalar", ""}),
                         none);
  ASSERT_EQ(f.cls, OpClass::kAttentionFwd);
  EXPECT_DOUBLE_EQ(f.flops, 2.0 * 4 * 16 * 512 * 512 * 64);
  // flash_attn layout [b, s, h, d]; the backward's query and key come after the output gradient.
  OpInfo b = classify_op(
      op("flash_attn::_flash_attn_backward", {{4, 512, 16, 64}, {4, 512, 16, 64}, {4, 512, 4, 64}, {4, 512, 4, 64}},
         {kBf16, kBf16, kBf16, kBf16}),
      none);
  ASSERT_EQ(b.cls, OpClass::kAttentionBwd);
  EXPECT_DOUBLE_EQ(b.flops, 2.5 * f.flops);
}

TEST(KinetoOps, MemoryBoundBytesReadEveryInputAndWriteOneOutput) {
  const KinetoTrace none;
  const OpInfo i = classify_op(op("aten::add_", {{4, 512, 1024}, {4, 512, 1024}, {}}, {kBf16, kBf16, "Scalar"}), none);
  ASSERT_EQ(i.cls, OpClass::kMemory);
  EXPECT_EQ(i.bytes, 3 * 4 * 512 * 1024 * 2);
  EXPECT_EQ(classify_op(op("aten::empty", {}, {}), none).note, "no Input Dims (record_shapes off)");
}

TEST(KinetoOps, CollectivesFromTheNcclKernel) {
  KinetoKernel k;
  k.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  EXPECT_TRUE(is_communication(k));
  EXPECT_EQ(collective_kind(k), "all_reduce");
  k.collective = "_reduce_scatter_base";
  EXPECT_EQ(collective_kind(k), "reduce_scatter");
  k.collective = "_allgather_base";
  EXPECT_EQ(collective_kind(k), "all_gather");
  KinetoKernel p2p;
  p2p.name = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
  EXPECT_EQ(collective_kind(p2p), "send_recv");
  KinetoKernel gemm;
  gemm.name = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_cublas";
  EXPECT_FALSE(is_communication(gemm));

  KinetoTrace t;
  t.kernels = {k};
  KinetoOp comms = op("record_param_comms", {}, {});
  comms.kernels = {0};
  EXPECT_EQ(classify_op(comms, t).cls, OpClass::kCollective);
}

TEST(KinetoOps, PredictionIsTheComputeModelsPrice) {
  const models::hardware::GpuSpec gpu =
      models::hardware::parse_gpu(models::presets::find("gpus", "h100-sxm-80gb", "gpu"), "gpu");
  const KinetoTrace none;
  const OpInfo mm = classify_op(op("aten::mm", {{8192, 8192}, {8192, 8192}}, {kBf16, kBf16}), none);
  const models::compute::ComputeModel cm(gpu, models::compute::Precision::kBf16);
  EXPECT_EQ(*predict_op(mm, 1, gpu), cm.gemm_matmul(mm.gemm));
  // A second kernel (a split-K reduction) pays another launch.
  EXPECT_EQ(*predict_op(mm, 2, gpu), cm.gemm_matmul(mm.gemm) + gpu.kernel_launch);
  const OpInfo add = classify_op(op("aten::add", {{1024}, {1024}}, {kBf16, kBf16}), none);
  EXPECT_EQ(*predict_op(add, 1, gpu), cm.memory_bound(sim::Bytes(3 * 1024 * 2), 1));
  OpInfo coll;
  coll.cls = OpClass::kCollective;
  EXPECT_FALSE(predict_op(coll, 1, gpu).has_value());
}

}  // namespace
}  // namespace trainsim::traces
