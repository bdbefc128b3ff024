#include "models/hardware/gpu_spec.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim::models::hardware {

using sim::config::Json;

const sim::config::Schema<GpuSpec>& gpu_schema() {
  static const sim::config::Schema<GpuSpec> schema = [] {
    sim::config::Schema<GpuSpec> s("gpu", "An accelerator: datasheet limits and compute-model constants.");
    s.string("name", &GpuSpec::name, std::nullopt, "Preset name, e.g. `h100-sxm-80gb`.")
        .string("description", &GpuSpec::description, "", "One line shown by `trainsim list gpus`.")
        .unit("memory", &GpuSpec::memory, &sim::config::read_bytes, "size", std::nullopt, "Device memory capacity.")
        .unit("hbm_bandwidth", &GpuSpec::hbm_bandwidth, &sim::config::read_bandwidth, "bandwidth", std::nullopt,
              "Datasheet HBM bandwidth.")
        .unit("peak_bf16", &GpuSpec::peak_bf16, &sim::config::read_flop_rate, "FLOP rate", std::nullopt,
              "Dense BF16 tensor-core peak.")
        .unit("peak_fp16", &GpuSpec::peak_fp16, &sim::config::read_flop_rate, "FLOP rate", std::nullopt,
              "Dense FP16 tensor-core peak.")
        .custom("peak_fp8", "FLOP rate or null", std::string("null"),
                "Dense FP8 tensor-core peak (null: the GPU has no FP8 tensor cores).",
                [](GpuSpec& g, const Json& j, const std::string& p) {
                  g.peak_fp8 = j.is_null() ? sim::FlopRate() : sim::config::read_flop_rate(j, p);
                })
        .custom("peak_mxfp8", "FLOP rate or null", std::string("null"),
                "Dense MXFP8 (E4M3/E5M2 in 32-element blocks with E8M0 scales) tensor-core peak; null: the GPU "
                "cannot run block-scaled FP8 (Hopper and older), and --precision mxfp8 is refused.",
                [](GpuSpec& g, const Json& j, const std::string& p) {
                  g.peak_mxfp8 = j.is_null() ? sim::FlopRate() : sim::config::read_flop_rate(j, p);
                })
        .custom("peak_nvfp4", "FLOP rate or null", std::string("null"),
                "Dense NVFP4 (E2M1 in 16-element blocks with E4M3 scales) tensor-core peak; null: no FP4 tensor "
                "cores, and --precision nvfp4 is refused.",
                [](GpuSpec& g, const Json& j, const std::string& p) {
                  g.peak_nvfp4 = j.is_null() ? sim::FlopRate() : sim::config::read_flop_rate(j, p);
                })
        .unit("peak_fp32", &GpuSpec::peak_fp32, &sim::config::read_flop_rate, "FLOP rate", std::nullopt,
              "FP32 (non-tensor) peak, used by the optimizer step.")
        .integer("sms", &GpuSpec::sms, 1, 10000, std::nullopt, "Streaming multiprocessors (wave quantization).")
        .number("gemm_efficiency", &GpuSpec::gemm_efficiency, 0.05, 1.0, std::nullopt,
                "Best achievable fraction of the BF16/FP16 peak on large GEMMs.")
        .number("fp8_gemm_efficiency", &GpuSpec::fp8_gemm_efficiency, 0.05, 1.0, 0.7,
                "Best achievable fraction of the FP8 peak on large GEMMs.")
        .custom("mxfp8_gemm_efficiency", "number or null", std::string("null"),
                "Best achievable fraction of the MXFP8 peak on large GEMMs (null: `fp8_gemm_efficiency`).",
                [](GpuSpec& g, const Json& j, const std::string& p) {
                  if (j.is_null())
                    g.mxfp8_gemm_efficiency.reset();
                  else
                    g.mxfp8_gemm_efficiency = sim::config::read_number(j, p, 0.05, 1.0);
                })
        .custom("nvfp4_gemm_efficiency", "number or null", std::string("null"),
                "Best achievable fraction of the NVFP4 peak on large GEMMs (null: `fp8_gemm_efficiency`).",
                [](GpuSpec& g, const Json& j, const std::string& p) {
                  if (j.is_null())
                    g.nvfp4_gemm_efficiency.reset();
                  else
                    g.nvfp4_gemm_efficiency = sim::config::read_number(j, p, 0.05, 1.0);
                })
        .number("attention_efficiency", &GpuSpec::attention_efficiency, 0.05, 1.0, std::nullopt,
                "Fused (FlashAttention) kernel throughput as a fraction of peak (the forward kernel, and the "
                "backward too unless `attention_bwd_efficiency` is given).")
        .custom("attention_bwd_efficiency", "number or null", std::string("null"),
                "Fused attention backward throughput as a fraction of peak (null: `attention_efficiency`). "
                "Backward kernels reach less of the peak than forward ones (FlashAttention-2/3 papers); "
                "`trainsim validate` fits both.",
                [](GpuSpec& g, const Json& j, const std::string& p) {
                  if (j.is_null())
                    g.attention_bwd_efficiency.reset();
                  else
                    g.attention_bwd_efficiency = sim::config::read_number(j, p, 0.05, 1.0);
                })
        .number("hbm_efficiency", &GpuSpec::hbm_efficiency, 0.05, 1.0, std::nullopt,
                "Achievable fraction of HBM bandwidth for streaming (memory-bound) kernels.")
        .number("sustained_clock", &GpuSpec::sustained_clock, 0.3, 1.0, 1.0,
                "Fraction of the boost clock held under sustained dense tensor-core load (power cap); scales "
                "every FLOP-bound kernel.")
        .number("gemm_tile_overhead_k", &GpuSpec::gemm_tile_overhead_k, 0.0, 4096.0, 128.0,
                "Per-tile fixed cost of a GEMM (prologue pipeline fill + epilogue store) in elements of K: a "
                "GEMM's K efficiency is k/(k + this). A tile's main loop advances 64 elements of K per stage and "
                "the fill/drain costs about one stage in each direction (CUTLASS multistage pipelines with 3-4 "
                "stages of 32-64 K-elements); `trainsim validate` fits it from measured GEMMs.")
        .number("gemm_wave_quantization", &GpuSpec::gemm_wave_quantization, 0.0, 1.0, 1.0,
                "How much of the last partial wave of output tiles a GEMM loses: 1 when every wave costs a full "
                "wave (classic data-parallel tiling), 0 when the library's persistent / stream-K scheduling "
                "spreads the remainder over all SMs. Tile padding is always paid. `trainsim validate` fits it.")
        .unit("kernel_launch", &GpuSpec::kernel_launch, &sim::config::read_time, "duration", std::nullopt,
              "Per-kernel launch and scheduling overhead.")
        .unit("reserved_memory", &GpuSpec::reserved_memory, &sim::config::read_bytes, "size", std::nullopt,
              "Memory not available to tensors (CUDA context, NCCL, allocator fragmentation).")
        .number("tdp_watts", &GpuSpec::tdp_watts, 0.0, 5000.0, 0.0,
                "Board power limit (TDP) in watts; the planner's energy objective charges it for every GPU "
                "for the whole iteration (training holds GPUs near their power limit). 0: unknown.")
        .number("power_limit_watts", &GpuSpec::power_limit_watts, 0.0, 5000.0, 0.0,
                "A power cap below the board's TDP (nvidia-smi --power-limit): the clock held under dense "
                "tensor-core load falls with it. Dynamic power goes as C V^2 f and, in the DVFS range, the "
                "voltage with the frequency, so f follows the cube root of the power: sustained_clock is "
                "multiplied by (power_limit_watts / tdp_watts)^(1/3), and energy is charged at the limit. "
                "0: no cap (the TDP).")
        .sources(&GpuSpec::sources);
    return s;
  }();
  return schema;
}

GpuSpec parse_gpu(const Json& j, const std::string& path) {
  GpuSpec g;
  gpu_schema().parse(j, path, g);
  if (g.power_limit_watts > 0.0) {
    const std::string at = path.empty() ? "power_limit_watts" : path + ".power_limit_watts";
    if (g.tdp_watts <= 0.0)
      throw ConfigError(at, "needs the board's tdp_watts to scale the clock from", "set tdp_watts as well");
    if (g.power_limit_watts > g.tdp_watts)
      throw ConfigError(at,
                        "is " + std::to_string(static_cast<int64_t>(g.power_limit_watts)) + " W, above tdp_watts " +
                            std::to_string(static_cast<int64_t>(g.tdp_watts)) + " W",
                        "use at most tdp_watts (boards do not run above their TDP)");
    g.sustained_clock = std::max(0.3, g.sustained_clock * std::cbrt(g.power_limit_watts / g.tdp_watts));
    g.tdp_watts = g.power_limit_watts;
  }
  return g;
}

}  // namespace trainsim::models::hardware
