// The validator's measurements on real GPUs: device facts, HBM and host copies, launch cost,
// every GEMM shape of the plan's layer (default and best cuBLASLt algorithm, bf16 and fp8), the
// plan's collectives, and the replay of one decoder layer shard on real kernels.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <map>
#include <ostream>
#include <set>

#include "kernels/kernels.hpp"
#include "models/llm/layer_kernels.hpp"
#include "models/workload/run/simulate.hpp"
#include "sim/error.hpp"
#include "validator/gpu/buffers.hpp"
#include "validator/gpu/check.hpp"
#include "validator/gpu/collectives.hpp"
#include "validator/gpu/gemm.hpp"
#include "validator/gpu/replay.hpp"
#include "validator/gpu/timing.hpp"
#include "validator/gpu/world.hpp"
#include "validator/runner.hpp"

namespace trainsim::validator {

namespace calibration = models::calibration;

namespace {
using namespace gpu;

std::string version_text(int v, int major_div, int minor_div) {
  return std::to_string(v / major_div) + "." + std::to_string((v % major_div) / minor_div);
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// trainsim GPU preset for a CUDA device name, or "" when none matches.
std::string preset_for(const std::string& name, size_t memory) {
  const double gib = static_cast<double>(memory) / (1024.0 * 1024.0 * 1024.0);
  if (name.find("H100") != std::string::npos) return "h100-sxm-80gb";
  if (name.find("H200") != std::string::npos) return "h200-sxm-141gb";
  if (name.find("B200") != std::string::npos) return "b200";
  if (name.find("A100") != std::string::npos) return gib > 60 ? "a100-sxm-80gb" : "a100-sxm-40gb";
  return "";
}

void log_line(std::ostream* log, const World& w, const std::string& text) {
  if (log && w.rank() == 0) *log << "validate: " << text << std::endl;
}

calibration::Provenance provenance(const World& world, const cudaDeviceProp& prop, const MeasureOptions& opt) {
  calibration::Provenance p;
  p.gpu_name = prop.name;
  p.gpu_preset = preset_for(prop.name, prop.totalGlobalMem);
  int driver = 0, runtime = 0;
  TRAINSIM_CUDA(cudaDriverGetVersion(&driver));
  TRAINSIM_CUDA(cudaRuntimeGetVersion(&runtime));
  p.driver_version = "CUDA driver API " + version_text(driver, 1000, 10);
  p.cuda_version = version_text(runtime, 1000, 10);
  const size_t lt = cublasLtGetVersion();
  p.cublas_version =
      std::to_string(lt / 10000) + "." + std::to_string((lt % 10000) / 100) + "." + std::to_string(lt % 100);
  int nccl = 0;
  TRAINSIM_NCCL(ncclGetVersion(&nccl));
  p.nccl_version =
      std::to_string(nccl / 10000) + "." + std::to_string((nccl % 10000) / 100) + "." + std::to_string(nccl % 100);
  p.date = utc_now();
  p.command = opt.command;
  p.host = world.host();
  p.gpus = world.size();
  return p;
}

calibration::Measurement copy_record(const char* name, calibration::OpKind kind, int64_t bytes, double t, int reps) {
  calibration::Measurement m;
  m.name = name;
  m.kind = kind;
  m.bytes = bytes;
  m.measured_s = t;
  m.reps = reps;
  return m;
}

// HBM bandwidth (1 GiB device-to-device copy, bytes read + written), pinned host copies, and the
// cost of one kernel launch (2,000 empty kernels back to back).
std::vector<calibration::Measurement> measure_basics(cudaStream_t s, const MeasureOptions& opt) {
  std::vector<calibration::Measurement> out;
  const size_t big = size_t{1} << 30;
  {
    DeviceBuffer a(big), b(big);
    fill_bytes(a.get(), big, 1, s);
    const double t = median_time(s, opt.warmup, opt.reps, [&](int) {
      TRAINSIM_CUDA(cudaMemcpyAsync(b.get(), a.get(), big, cudaMemcpyDeviceToDevice, s));
    });
    out.push_back(copy_record("hbm.copy", calibration::OpKind::kCopyD2D, static_cast<int64_t>(2 * big), t, opt.reps));
  }
  {
    const size_t bytes = size_t{256} << 20;
    void* host = nullptr;
    TRAINSIM_CUDA(cudaMallocHost(&host, bytes));
    std::memset(host, 0x3c, bytes);
    DeviceBuffer d(bytes);
    const double h2d = median_time(s, opt.warmup, opt.reps, [&](int) {
      TRAINSIM_CUDA(cudaMemcpyAsync(d.get(), host, bytes, cudaMemcpyHostToDevice, s));
    });
    const double d2h = median_time(s, opt.warmup, opt.reps, [&](int) {
      TRAINSIM_CUDA(cudaMemcpyAsync(host, d.get(), bytes, cudaMemcpyDeviceToHost, s));
    });
    TRAINSIM_CUDA(cudaFreeHost(host));
    out.push_back(copy_record("host.h2d", calibration::OpKind::kCopyH2D, static_cast<int64_t>(bytes), h2d, opt.reps));
    out.push_back(copy_record("host.d2h", calibration::OpKind::kCopyD2H, static_cast<int64_t>(bytes), d2h, opt.reps));
  }
  {
    constexpr int kLaunches = 2000;
    const double t = median_time(s, 2, std::max(5, opt.reps / 3), [&](int) {
      for (int i = 0; i < kLaunches; ++i) launch_empty(s);
    });
    calibration::Measurement m =
        copy_record("launch.empty", calibration::OpKind::kLaunch, 0, t / kLaunches, std::max(5, opt.reps / 3));
    m.kernels = 1;
    out.push_back(m);
  }
  return out;
}

// Brings the GPU to its sustained clocks before anything is timed: an idle H100 sits at 345 MHz
// and ramps up over tens of milliseconds, which would make the first measurements slow. Runs
// large bf16 GEMMs back to back for about `seconds`.
void warm_up_clocks(cudaStream_t s, double seconds) {
  GemmRunner runner;
  const models::compute::GemmShape shape{8192, 8192, 8192, 1};
  GemmRunner::Plan plan = runner.plan(shape, "TN", false, 1);
  DeviceBuffer x(GemmRunner::x_bytes(shape, false)), w(GemmRunner::w_bytes(shape, false)),
      c(GemmRunner::c_bytes(shape));
  fill_bf16(x.get(), x.bytes() / 2, 1.0f, 5, s);
  fill_bf16(w.get(), w.bytes() / 2, 0.05f, 6, s);
  EventTimer timer;
  double elapsed = 0.0;
  while (elapsed < seconds)
    elapsed += timer.time(
        s,
        [&](int) {
          for (int i = 0; i < 20; ++i) runner.run(plan, x.get(), w.get(), c.get(), 0, s);
        },
        0);
  runner.destroy(plan);
}

// Every distinct GEMM of the layer: the time with cuBLASLt's default (first heuristic) algorithm
// and the best of up to `gemm_algorithms` candidates; forward GEMMs also in FP8 when available.
std::vector<calibration::Measurement> measure_gemms(const models::llm::Kernels& kernels, bool has_fp8, cudaStream_t s,
                                                    const MeasureOptions& opt, std::ostream* log, const World& world) {
  GemmRunner runner;
  std::vector<calibration::Measurement> out;
  std::set<std::string> seen;
  for (const auto& k : kernels) {
    if (k.kind != models::llm::KernelOp::Kind::kGemm) continue;
    const std::string layout = models::llm::to_string(k.layout);
    for (const bool fp8 : {false, true}) {
      if (fp8 && (!has_fp8 || !opt.fp8 || layout != "TN" || k.gemm.batch != 1)) continue;
      const std::string key = std::to_string(k.gemm.m) + "x" + std::to_string(k.gemm.n) + "x" +
                              std::to_string(k.gemm.k) + "x" + std::to_string(k.gemm.batch) + layout + (fp8 ? "8" : "");
      if (!seen.insert(key).second) continue;
      GemmRunner::Plan plan = runner.plan(k.gemm, layout, fp8, opt.gemm_algorithms);
      // Rotate operand sets so that small GEMMs do not run out of L2 (50 MB on H100).
      const size_t set_bytes =
          GemmRunner::x_bytes(k.gemm, fp8) + GemmRunner::w_bytes(k.gemm, fp8) + GemmRunner::c_bytes(k.gemm);
      const int sets = static_cast<int>(std::clamp<size_t>((size_t{256} << 20) / std::max<size_t>(set_bytes, 1), 1, 8));
      std::vector<DeviceBuffer> xs, ws, cs;
      for (int i = 0; i < sets; ++i) {
        xs.emplace_back(GemmRunner::x_bytes(k.gemm, fp8));
        ws.emplace_back(GemmRunner::w_bytes(k.gemm, fp8));
        cs.emplace_back(GemmRunner::c_bytes(k.gemm));
        const uint64_t seed = 1000 + 3 * static_cast<uint64_t>(i);
        if (fp8) {
          fill_bytes(xs.back().get(), xs.back().bytes(), seed, s);
          fill_bytes(ws.back().get(), ws.back().bytes(), seed + 1, s);
        } else {
          fill_bf16(xs.back().get(), xs.back().bytes() / 2, 1.0f, seed, s);
          fill_bf16(ws.back().get(), ws.back().bytes() / 2, 0.05f, seed + 1, s);
        }
      }
      // Candidates are timed round-robin, one repetition of each in turn, so that clock and power
      // drift over the run falls on all of them alike.
      const size_t algos = plan.algos.size();
      std::vector<std::vector<double>> times(algos);
      EventTimer timer;
      for (int rep = 0; rep < opt.warmup + opt.reps; ++rep)
        for (size_t a = 0; a < algos; ++a) {
          const size_t i = static_cast<size_t>(rep % sets);
          const double t = timer.time(
              s, [&](int) { runner.run(plan, xs[i].get(), ws[i].get(), cs[i].get(), static_cast<int>(a), s); }, rep);
          if (rep >= opt.warmup) times[a].push_back(t);
        }
      std::vector<double> per_algo;
      for (auto& t : times) per_algo.push_back(calibration::median(std::move(t)));
      runner.destroy(plan);
      calibration::Measurement m;
      m.name = k.name;
      m.kind = calibration::OpKind::kGemm;
      m.m = k.gemm.m;
      m.n = k.gemm.n;
      m.k = k.gemm.k;
      m.batch = k.gemm.batch;
      m.precision = fp8 ? "fp8" : "bf16";
      m.flops = k.gemm.flops().count();
      m.measured_s = world.max(per_algo.front());
      m.best_s = world.max(*std::min_element(per_algo.begin(), per_algo.end()));
      m.reps = opt.reps;
      out.push_back(m);
      log_line(log, world,
               "gemm " + m.name + " " + m.precision + " " + layout + " " + std::to_string(m.m) + "x" +
                   std::to_string(m.n) + "x" + std::to_string(m.k) + ": " + std::to_string(m.measured_s * 1e6) +
                   " us (best of " + std::to_string(per_algo.size()) + ": " + std::to_string(m.best_s * 1e6) + " us)");
    }
  }
  return out;
}

std::vector<CollectiveCase> plan_collectives(const models::workload::Job& job, const models::llm::LayerKernels& lk) {
  // The TP activations collective of the layer, a pipeline send of the same size, and DP gradient
  // buckets, on the whole world: sizes of the plan plus a sweep so the fit sees latency and bandwidth.
  std::vector<CollectiveCase> cases;
  const int64_t tp_bytes = lk.tp_comm_bytes.count();
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"}) {
    for (int64_t b = int64_t{1} << 16; b <= (int64_t{1} << 28); b <<= 2)
      cases.push_back({op, b, std::string("sweep.") + op});
    cases.push_back({op, tp_bytes, std::string("tp.") + op});
  }
  cases.push_back({"reduce_scatter", job.bucket_size.count(), "dp.bucket.reduce_scatter"});
  cases.push_back({"all_reduce", job.bucket_size.count(), "dp.bucket.all_reduce"});
  return cases;
}
}  // namespace

calibration::MeasurementSet measure(const models::workload::Job& job, const MeasureOptions& opt, std::ostream* log) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0)
    throw NoGpuError(std::string("no CUDA GPU is visible (") +
                     (e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found 0 devices") +
                     "); run it on a machine with an NVIDIA GPU, or fit saved results with `trainsim validate "
                     "--measurements FILE`");
  // What the replay cannot run, said before any time is spent measuring.
  if (job.attention != models::workload::Attention::kFlash)
    throw ConfigError("attention", "the validator replays fused (flash) attention only", "use --attention flash");
  if (const int64_t d = job.model.head_dim(); d != 64 && d != 128)
    throw ConfigError("model.hidden",
                      "the replay's attention kernel supports head dims 64 and 128, not " + std::to_string(d),
                      "validate a model whose hidden / heads is 64 or 128");
  World world;
  TRAINSIM_CUDA(cudaSetDevice(world.local_rank() % devices));
  cudaDeviceProp prop{};
  TRAINSIM_CUDA(cudaGetDeviceProperties(&prop, world.local_rank() % devices));

  calibration::MeasurementSet set;
  set.provenance = provenance(world, prop, opt);
  set.provenance.job = job.to_json();
  log_line(log, world,
           std::string(prop.name) + ", " + std::to_string(prop.multiProcessorCount) + " SMs, CUDA " +
               set.provenance.cuda_version + ", cuBLASLt " + set.provenance.cublas_version + ", NCCL " +
               set.provenance.nccl_version + ", " + std::to_string(world.size()) + " process(es)");
  cudaStream_t s = nullptr;
  TRAINSIM_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  warm_up_clocks(s, 2.0);
  for (auto& m : measure_basics(s, opt)) set.items.push_back(std::move(m));
  log_line(log, world, "basics: hbm copy, host copies, launch cost done");

  const models::llm::LayerShape shape{job.micro_batch, job.seq_len, job.tp, job.sp,
                                      job.attention == models::workload::Attention::kFlash};
  const models::llm::LayerKernels lk = models::llm::layer_kernels(job.model, shape);
  const models::llm::Kernels seq = models::llm::layer_sequence(lk);
  const bool has_fp8 = prop.major >= 9;
  for (auto& m : measure_gemms(seq, has_fp8, s, opt, log, world)) set.items.push_back(std::move(m));

  ReplayResult replay = replay_layer(job, lk, s, opt.warmup, opt.reps);
  log_line(log, world, "replay: " + replay.scope);
  set.provenance.replay = replay.scope;
  set.provenance.kernels = std::string("attention forward ") +
                           kernels::attention_kernel_name(kernels::attention_auto_choice(false)) + ", backward " +
                           kernels::attention_kernel_name(kernels::attention_auto_choice(true)) +
                           " (AttentionKernel::kAuto on this GPU)";
  for (auto& m : replay.ops) set.items.push_back(std::move(m));
  set.items.push_back(replay.layer);

  // A plan whose model replica is one GPU: replay its whole iteration too, when it fits.
  if (job.tp == 1 && job.pp == 1 && job.recompute == models::workload::Recompute::kNone &&
      job.attention == models::workload::Attention::kFlash) {
    if (models::workload::simulate(job).fits) {
      std::string scope;
      set.items.push_back(replay_iteration(job, s, 1, std::max(3, opt.reps / 6), &scope));
      log_line(log, world, "iteration replay: " + scope);
      set.provenance.replay += "; and " + scope;
    } else {
      log_line(log, world, "iteration replay skipped: the plan does not fit in this GPU's memory");
    }
  }

  for (auto& m : measure_collectives(world, plan_collectives(job, lk), static_cast<int>(job.cluster.gpus_per_node),
                                     opt.warmup, opt.reps))
    set.items.push_back(std::move(m));
  log_line(log, world, "collectives done");
  TRAINSIM_CUDA(cudaStreamDestroy(s));
  return set;
}

}  // namespace trainsim::validator
