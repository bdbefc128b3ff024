#include "models/compute/compute_model.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/config/schema.hpp"

namespace trainsim::models::compute {

namespace {
// A kernel's bytes through HBM, computed in double from the shapes: past 1 EiB is the input's error.
sim::Bytes kernel_bytes(double bytes) {
  return sim::Bytes::checked(bytes, "kernel memory traffic",
                             "a kernel moves more than 1 EiB: a smaller micro-batch, sequence or hidden size");
}

// Output tile shapes cuBLAS/CUTLASS pick among on Ampere/Hopper (CUTLASS default sm80/sm90
// GEMM configurations use 128x256, 256x128 and 128x128 threadblock tiles; 64-wide tiles for
// skinny problems). `quality` is a smaller tile's throughput relative to the largest tile: less
// operand reuse per byte loaded from shared memory (arithmetic intensity ~ tm*tn/(tm+tn)), so
// 128x128 reaches 128*128/256 / (128*256/384) = 0.75 of the reuse; we take the square root of
// the reuse ratio as the throughput ratio since reuse only bounds part of the main loop.
struct Tile {
  int64_t tm, tn;
  double quality;
};
constexpr Tile kTiles[] = {{256, 128, 1.0}, {128, 256, 1.0}, {128, 128, 0.866}, {64, 128, 0.707}, {64, 64, 0.577}};
// The per-tile fixed cost (prologue pipeline fill + epilogue store, in elements of K) is the GPU's
// `gemm_tile_overhead_k` (default 128; its documentation in gpu_spec.cpp gives the reasoning).

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

Precision parse_precision(const std::string& text, const std::string& path) {
  const std::string v =
      sim::config::read_enum(sim::config::Json(text), path, {"bf16", "fp16", "fp8", "mxfp8", "nvfp4"});
  return v == "bf16"    ? Precision::kBf16
         : v == "fp16"  ? Precision::kFp16
         : v == "fp8"   ? Precision::kFp8
         : v == "mxfp8" ? Precision::kMxfp8
                        : Precision::kNvfp4;
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp8: return "fp8";
    case Precision::kMxfp8: return "mxfp8";
    case Precision::kNvfp4: return "nvfp4";
  }
  return "?";
}

double operand_bytes(Precision p) {
  switch (p) {
    case Precision::kFp8: return 1.0;
    case Precision::kMxfp8: return 1.0 + 1.0 / 32.0;
    case Precision::kNvfp4: return 0.5 + 1.0 / 16.0;
    default: return 2.0;
  }
}

int64_t activation_bytes(Precision) { return 2; }

sim::Flops GemmShape::flops() const {
  return sim::Flops(2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                    static_cast<double>(batch));
}

ComputeModel::ComputeModel(const hardware::GpuSpec& gpu, Precision precision) : gpu_(gpu), precision_(precision) {
  switch (precision) {
    case Precision::kBf16:
      peak_ = gpu.peak_bf16;
      best_efficiency_ = gpu.gemm_efficiency;
      break;
    case Precision::kFp16:
      peak_ = gpu.peak_fp16;
      best_efficiency_ = gpu.gemm_efficiency;
      break;
    case Precision::kFp8:
      if (gpu.peak_fp8.per_second() <= 0.0)
        throw ConfigError("precision", "fp8 GEMMs need a GPU with FP8 tensor cores; " + gpu.name + " has none",
                          "use --precision bf16 or an H100/H200/B200 GPU");
      peak_ = gpu.peak_fp8;
      best_efficiency_ = gpu.fp8_gemm_efficiency;
      break;
    case Precision::kMxfp8:
      if (gpu.peak_mxfp8.per_second() <= 0.0)
        throw ConfigError("precision",
                          "mxfp8 needs tensor cores with block scaling (Blackwell); " + gpu.name + " has none",
                          "use --precision fp8 (per-tensor scaling) or bf16, or a Blackwell GPU (b200, b300, gb200, "
                          "gb300)");
      peak_ = gpu.peak_mxfp8;
      best_efficiency_ = gpu.mxfp8_gemm_efficiency.value_or(gpu.fp8_gemm_efficiency);
      break;
    case Precision::kNvfp4:
      if (gpu.peak_nvfp4.per_second() <= 0.0)
        throw ConfigError("precision", "nvfp4 needs FP4 tensor cores (Blackwell); " + gpu.name + " has none",
                          "use --precision fp8 or bf16, or a Blackwell GPU (b200, b300, gb200, gb300)");
      peak_ = gpu.peak_nvfp4;
      best_efficiency_ = gpu.nvfp4_gemm_efficiency.value_or(gpu.fp8_gemm_efficiency);
      break;
  }
  hbm_ = gpu.hbm_bandwidth * gpu.hbm_efficiency;
  peak_ = peak_ * gpu.sustained_clock;
}

double ComputeModel::tile_efficiency(int64_t tiles, double useful, int64_t tm, int64_t tn) const {
  const int64_t waves = ceil_div(tiles, gpu_.sms);
  const double area = static_cast<double>(tm) * static_cast<double>(tn);
  const double issued = static_cast<double>(waves) * static_cast<double>(gpu_.sms) * area;
  // Tile padding is always paid; the idle share of the last wave only as far as the library's
  // scheduling leaves it idle (gemm_wave_quantization: 1 = classic tiling, 0 = stream-K).
  const double w = gpu_.gemm_wave_quantization;
  if (w >= 1.0) return useful / issued;
  const double last = static_cast<double>(tiles) / (static_cast<double>(waves) * static_cast<double>(gpu_.sms));
  return useful / (static_cast<double>(tiles) * area) * (1.0 - w * (1.0 - last));
}

double ComputeModel::gemm_shape_efficiency(const GemmShape& s) const {
  double best = 0.0;
  for (const Tile& t : kTiles) {
    const int64_t tiles = ceil_div(s.m, t.tm) * ceil_div(s.n, t.tn) * s.batch;
    const double useful = static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.batch);
    best = std::max(best, tile_efficiency(tiles, useful, t.tm, t.tn) * t.quality);
  }
  const double k_eff = static_cast<double>(s.k) / (static_cast<double>(s.k) + gpu_.gemm_tile_overhead_k);
  return best * k_eff;
}

double ComputeModel::grouped_shape_efficiency(std::span<const GemmShape> problems) const {
  double best = 0.0, flops = 0.0, k_weighted = 0.0;
  for (const Tile& t : kTiles) {
    int64_t tiles = 0;
    double useful = 0.0;
    for (const GemmShape& s : problems) {
      if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) continue;
      tiles += ceil_div(s.m, t.tm) * ceil_div(s.n, t.tn) * s.batch;
      useful += static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.batch);
    }
    if (tiles == 0) return 1.0;
    best = std::max(best, tile_efficiency(tiles, useful, t.tm, t.tn) * t.quality);
  }
  // Every tile of a problem runs its whole K: the K efficiency weighted by each problem's FLOPs.
  for (const GemmShape& s : problems) {
    if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) continue;
    const double f = s.flops().count();
    flops += f;
    k_weighted += f * static_cast<double>(s.k) / (static_cast<double>(s.k) + gpu_.gemm_tile_overhead_k);
  }
  return best * k_weighted / flops;
}

sim::Time ComputeModel::grouped_gemm(std::span<const GemmShape> problems) const {
  const double input_bytes = operand_bytes(precision_);
  double flops = 0.0, traffic = 0.0, cast = 0.0;
  for (const GemmShape& s : problems) {
    if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) continue;
    flops += s.flops().count();
    const auto b = static_cast<double>(s.batch);
    traffic += static_cast<double>(s.m * s.k + s.k * s.n) * input_bytes * b + static_cast<double>(s.m * s.n) * 2.0 * b;
    cast += static_cast<double>(s.m * s.k) * quantize_bytes_per_element() * b;
  }
  if (flops <= 0.0) return sim::Time::zero();
  const sim::Time math = sim::Flops(flops) / (peak_ * (best_efficiency_ * grouped_shape_efficiency(problems)));
  sim::Time t = std::max(math, kernel_bytes(traffic) / hbm_) + gpu_.kernel_launch;
  if (quantized(precision_)) t += kernel_bytes(cast) / hbm_ + gpu_.kernel_launch;  // as gemm()
  return t;
}

sim::Time ComputeModel::multi_stream_gemm(std::span<const GemmShape> problems, int streams) const {
  if (streams <= 0) return grouped_gemm(problems);
  std::vector<GemmShape> live;
  for (const GemmShape& s : problems)
    if (s.m > 0 && s.n > 0 && s.k > 0 && s.batch > 0) live.push_back(s);
  if (live.empty()) return sim::Time::zero();
  sim::Time t = sim::Time::zero();
  const size_t per_round = static_cast<size_t>(streams);
  for (size_t i = 0; i < live.size(); i += per_round) {
    const std::span<const GemmShape> round(live.data() + i, std::min(per_round, live.size() - i));
    t += grouped_gemm(round);  // its casts too: Transformer Engine quantizes each expert's input
  }
  return t;
}

namespace {
sim::Bytes traffic_of(const GemmShape& s, double input_bytes) {
  const auto b = static_cast<double>(s.batch);
  return kernel_bytes(static_cast<double>(s.m * s.k + s.k * s.n) * input_bytes * b +
                      static_cast<double>(s.m * s.n) * 2.0 * b);
}
}  // namespace

sim::Bytes ComputeModel::gemm_traffic(const GemmShape& s) const { return traffic_of(s, operand_bytes(precision_)); }

double ComputeModel::quantize_bytes_per_element() const {
  // Transformer Engine's quantize kernels read the 16-bit tensor once and write the quantized
  // values with their scales: per-tensor FP8 1 + 2 = 3 bytes (current scaling's amax pass rides in
  // the same fused kernel); MXFP8 and NVFP4 compute each block's scale in registers from the same
  // read, so the cost is the read plus the operand_bytes written. On Blackwell the GEMM consumes a
  // row-wise copy in the forward and a column-wise (transposed) copy in the backward, and TE writes
  // both from one read of the tensor: quantized outputs are counted twice for the block formats.
  switch (precision_) {
    case Precision::kFp8: return 3.0;
    case Precision::kMxfp8:
    case Precision::kNvfp4: return 2.0 + 2.0 * operand_bytes(precision_);
    default: return 0.0;
  }
}

sim::Time ComputeModel::matmul(const GemmShape& s, sim::FlopRate peak, double efficiency, double input_bytes) const {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) return sim::Time::zero();
  const sim::Time math = s.flops() / (peak * (efficiency * gemm_shape_efficiency(s)));
  return std::max(math, traffic_of(s, input_bytes) / hbm_) + gpu_.kernel_launch;
}

sim::Time ComputeModel::gemm_matmul(const GemmShape& s) const {
  return matmul(s, peak_, best_efficiency_, operand_bytes(precision_));
}

sim::Time ComputeModel::gemm16(const GemmShape& s) const {
  if (!quantized(precision_)) return gemm(s);
  return matmul(s, gpu_.peak_bf16 * gpu_.sustained_clock, gpu_.gemm_efficiency, 2.0);
}

sim::Time ComputeModel::gemm(const GemmShape& s) const {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) return sim::Time::zero();
  sim::Time t = gemm_matmul(s);
  if (quantized(precision_)) {
    // Quantized GEMMs take quantized inputs: the activation operand is cast first (Transformer
    // Engine's quantize kernel, quantize_bytes_per_element); weights are cast once per iteration
    // and cached across micro-batches, so only A is charged here.
    const double bytes = static_cast<double>(s.m * s.k * s.batch) * quantize_bytes_per_element();
    t += kernel_bytes(bytes) / hbm_ + gpu_.kernel_launch;
  }
  return t;
}

sim::Time ComputeModel::memory_bound(sim::Bytes bytes, int kernels) const {
  return bytes / hbm_ + gpu_.kernel_launch * kernels;
}

sim::Time ComputeModel::flash_attention(sim::Flops flops, bool backward) const {
  const double eff =
      backward ? gpu_.attention_bwd_efficiency.value_or(gpu_.attention_efficiency) : gpu_.attention_efficiency;
  return flops / (gpu_.peak_bf16 * (eff * gpu_.sustained_clock)) + gpu_.kernel_launch;
}

sim::Time ComputeModel::vector_math(sim::Flops flops, sim::Bytes bytes, int kernels) const {
  return std::max(flops / gpu_.peak_fp32, bytes / hbm_) + gpu_.kernel_launch * kernels;
}

}  // namespace trainsim::models::compute
