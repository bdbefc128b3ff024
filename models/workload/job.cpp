#include "models/workload/job.hpp"

#include "models/presets/catalog.hpp"
#include "models/schedules/schedule.hpp"

namespace trainsim::models::workload {

using sim::config::Json;

const sim::config::Schema<JobSpec>& job_schema() {
  static const sim::config::Schema<JobSpec> schema = [] {
    sim::config::Schema<JobSpec> s("job",
                                   "A training job: model, cluster and parallel configuration. "
                                   "Every key is also a command-line flag (`micro_batch` is `--micro-batch`).");
    auto ref = [](Json JobSpec::*m, const char* what) {
      return [m, what](JobSpec& j, const Json& v, const std::string& p) {
        if (!v.is_string() && !v.is_object())
          throw ConfigError(p, std::string("expected a ") + what + " preset name, a JSON file path or an object, got " +
                                   sim::config::json_type_name(v));
        j.*m = v;
      };
    };
    constexpr int64_t kMaxInt = sim::config::kUnboundedInt;
    s.custom("model", "preset name, file or object", std::nullopt, "The model (`trainsim list models`).",
             ref(&JobSpec::model, "model"))
        .custom("cluster", "preset name, file or object", std::nullopt, "The cluster (`trainsim list clusters`).",
                ref(&JobSpec::cluster, "cluster"))
        .custom("gpu", "preset name, file or object", std::string("null"),
                "Replaces the cluster's GPU (`trainsim list gpus`).",
                [](JobSpec& j, const Json& v, const std::string& p) {
                  if (!v.is_null() && !v.is_string() && !v.is_object())
                    throw ConfigError(p, "expected a GPU preset name, a JSON file path or an object");
                  j.gpu = v;
                })
        .custom("calibration", "preset name, file or object", std::string("null"),
                "Constants fitted to measurements on the job's GPU (`trainsim validate`, `trainsim list "
                "calibrations`), set over the GPU and cluster; null = the presets' values.",
                [](JobSpec& j, const Json& v, const std::string& p) {
                  if (!v.is_null() && !v.is_string() && !v.is_object())
                    throw ConfigError(p, "expected a calibration preset name, a JSON file path or an object");
                  j.calibration = v;
                })
        .integer("gpus", &JobSpec::gpus, 1, kMaxInt, std::nullopt, "Total GPUs.")
        .integer("tp", &JobSpec::tp, 1, 1024, 1, "Tensor-parallel size (Megatron 1-D).")
        .integer("pp", &JobSpec::pp, 1, 65536, 1, "Pipeline-parallel stages.")
        .nullable_integer("dp", &JobSpec::dp, 1, kMaxInt, "Data-parallel size; null = gpus/(tp*pp).")
        .integer("vp", &JobSpec::vp, 1, 1024, 1, "Virtual stages (model chunks) per rank for --schedule interleaved.")
        .boolean("sp", &JobSpec::sp, true,
                 "Megatron sequence parallelism in TP regions (on by default as in Megatron-Core/NeMo recipes; "
                 "no effect when tp = 1; pass false for 2021-style runs).")
        .integer("zero", &JobSpec::zero, 0, 3, 0,
                 "ZeRO stage: 1 shards optimizer states (distributed optimizer), 2 also gradients, 3 also weights.")
        .enumeration("recompute", &JobSpec::recompute, {"none", "selective", "full"}, std::string("none"),
                     "Activation recomputation (selective = attention core, Korthikanti et al.).")
        .integer("micro_batch", &JobSpec::micro_batch, 1, kMaxInt, 1, "Micro-batch size (sequences).")
        .integer("global_batch", &JobSpec::global_batch, 1, kMaxInt, std::nullopt,
                 "Global batch size (sequences per iteration).")
        .nullable_integer("seq_len", &JobSpec::seq_len, 1, kMaxInt, "Sequence length; null = the model's.")
        .custom("schedule", "schedule name", std::string("\"1f1b\""), "Pipeline schedule (`trainsim list schedules`).",
                [](JobSpec& j, const Json& v, const std::string& p) {
                  j.schedule = sim::config::read_string(v, p);
                  schedules::ScheduleRegistry::instance().get(j.schedule, p);
                })
        .enumeration("precision", &JobSpec::precision, {"bf16", "fp16", "fp8"}, std::string("bf16"),
                     "Mixed precision with fp32 master weights; fp8 runs GEMMs in FP8.")
        .enumeration("attention", &JobSpec::attention, {"flash", "unfused"}, std::string("flash"),
                     "Attention kernel: fused FlashAttention, or unfused batched GEMMs + softmax (2021 Megatron).")
        .boolean("overlap_grad_reduce", &JobSpec::overlap_grad_reduce, true,
                 "Overlap bucketed data-parallel gradient reduction with the last backward.")
        .boolean("overlap_p2p", &JobSpec::overlap_p2p, true,
                 "Pipeline sends run asynchronously beside compute; false makes each stage wait for its send "
                 "to finish (2021 Megatron synchronised after every batch_isend_irecv).")
        .boolean("scatter_gather", &JobSpec::scatter_gather, true,
                 "Pipeline sends split across TP ranks and re-gathered over NVLink (Narayanan Sec 4.1).")
        .unit("bucket_size", &JobSpec::bucket_size, &sim::config::read_bytes, "size", std::string("160MB"),
              "Gradient bucket size for overlapped data-parallel reduction (Megatron: 40M fp32 elements).")
        .unit("kernel_dispatch", &JobSpec::kernel_dispatch, &sim::config::read_time, "duration", std::string("10us"),
              "Host (CPU) time to issue one kernel from the framework: a task whose kernels are shorter is "
              "host-bound. Eager PyTorch ~10 us; CUDA graphs ~0.")
        .enumeration("network", &JobSpec::network, {"flow", "analytic"}, std::string("flow"),
                     "How communication is simulated: `flow` runs every transfer of every collective as flows "
                     "on the cluster's topology (max-min bandwidth sharing); `analytic` uses the hierarchical "
                     "alpha-beta formulas (no contention between concurrent collectives).")
        .integer("seed", &JobSpec::seed, 0, kMaxInt, 0, "Random seed (stochastic components).");
    return s;
  }();
  return schema;
}

JobSpec parse_job(const Json& j) {
  JobSpec spec;
  job_schema().parse(j, "", spec);
  return spec;
}

namespace {
std::string divisors_text(int64_t n, int64_t limit = 12) {
  std::string out;
  int64_t count = 0;
  for (int64_t d = 1; d <= n && count < limit; ++d)
    if (n % d == 0) out += (count++ ? ", " : "") + std::to_string(d);
  return out;
}

std::string multiples_near(int64_t value, int64_t unit) {
  const int64_t lo = value / unit * unit;
  if (lo == 0) return std::to_string(unit);
  return std::to_string(lo) + " or " + std::to_string(lo + unit);
}

Json resolve_ref(const std::string& kind, const Json& ref, const std::string& path) {
  return ref.is_string() ? presets::resolve(kind, ref.get<std::string>(), path) : ref;
}
}  // namespace

Job resolve_job(const JobSpec& s) {
  Job j;
  j.model = llm::parse_model(resolve_ref("models", s.model, "model"), "model");
  const Json cluster_json = resolve_ref("clusters", s.cluster, "cluster");
  j.cluster = hardware::parse_cluster(cluster_json, "cluster");
  Json gpu_json;
  std::string gpu_path = "cluster.gpu";
  if (!s.gpu.is_null()) {
    gpu_json = resolve_ref("gpus", s.gpu, "gpu");
    gpu_path = "gpu";
  } else if (j.cluster.gpu == "inline") {
    gpu_json = j.cluster.gpu_inline;
  } else {
    gpu_json = presets::find("gpus", j.cluster.gpu, "cluster.gpu");
  }
  j.gpu = hardware::parse_gpu(gpu_json, gpu_path);
  if (!s.calibration.is_null()) {
    // Fitted constants replace the presets' ones; the specs are parsed again with the overrides
    // merged in (each override was already checked by its schema when the calibration was read).
    hardware::Calibration cal =
        hardware::parse_calibration(resolve_ref("calibrations", s.calibration, "calibration"), "calibration");
    if (cal.gpu != j.gpu.name)
      throw ConfigError("calibration", "measured on " + cal.gpu + " but the job runs on " + j.gpu.name,
                        "use a calibration measured on " + j.gpu.name + ", or drop --calibration");
    j.gpu = hardware::parse_gpu(hardware::calibrate_gpu_json(gpu_json, cal), gpu_path);
    j.cluster = hardware::parse_cluster(hardware::calibrate_cluster_json(cluster_json, cal), "cluster");
    j.calibration = std::move(cal);
  }
  j.gpus = s.gpus;
  j.tp = s.tp;
  j.pp = s.pp;
  j.vp = s.vp;
  j.sp = s.sp;
  j.zero = s.zero;
  j.recompute = s.recompute;
  j.micro_batch = s.micro_batch;
  j.global_batch = s.global_batch;
  j.seq_len = s.seq_len.value_or(j.model.seq_len);
  j.schedule = s.schedule;
  j.precision = compute::parse_precision(s.precision, "precision");
  j.attention = s.attention;
  j.overlap_grad_reduce = s.overlap_grad_reduce;
  j.overlap_p2p = s.overlap_p2p;
  j.scatter_gather = s.scatter_gather;
  j.bucket_size = s.bucket_size;
  j.kernel_dispatch = s.kernel_dispatch;
  j.network = s.network;
  j.seed = s.seed;

  const auto& m = j.model;
  if (j.gpus > j.cluster.max_gpus)
    throw ConfigError("gpus",
                      std::to_string(j.gpus) + " GPUs exceed cluster \"" + j.cluster.name + "\"'s maximum of " +
                          std::to_string(j.cluster.max_gpus),
                      "use at most " + std::to_string(j.cluster.max_gpus) + " GPUs");
  if (m.heads % j.tp != 0)
    throw ConfigError("tp",
                      "heads (" + std::to_string(m.heads) + ") must be divisible by tp (" + std::to_string(j.tp) + ")",
                      "choose --tp among the divisors of " + std::to_string(m.heads) + ": " + divisors_text(m.heads));
  if (m.kv_heads_or_heads() % j.tp != 0)
    throw ConfigError("tp",
                      "kv_heads (" + std::to_string(m.kv_heads_or_heads()) + ") must be divisible by tp (" +
                          std::to_string(j.tp) + ")",
                      "choose --tp among the divisors of " + std::to_string(m.kv_heads_or_heads()) + ": " +
                          divisors_text(m.kv_heads_or_heads()));
  if (m.ffn_hidden % j.tp != 0)
    throw ConfigError(
        "tp",
        "ffn_hidden (" + std::to_string(m.ffn_hidden) + ") must be divisible by tp (" + std::to_string(j.tp) + ")",
        "choose a --tp that divides " + std::to_string(m.ffn_hidden));
  const int64_t mp = j.tp * j.pp;
  if (j.gpus % mp != 0)
    throw ConfigError("gpus",
                      std::to_string(j.gpus) +
                          " GPUs cannot be split into model-parallel groups of tp*pp = " + std::to_string(mp) + " GPUs",
                      "use a multiple of " + std::to_string(mp) + " GPUs, e.g. " + multiples_near(j.gpus, mp));
  j.dp = j.gpus / mp;
  if (s.dp && *s.dp != j.dp)
    throw ConfigError("dp", "dp (" + std::to_string(*s.dp) + ") must equal gpus/(tp*pp) = " + std::to_string(j.dp),
                      "drop --dp or set --gpus " + std::to_string(*s.dp * mp));
  if (j.tp > j.cluster.gpus_per_node && j.tp % j.cluster.gpus_per_node != 0)
    throw ConfigError("tp",
                      "tp (" + std::to_string(j.tp) + ") larger than a node must be a multiple of gpus_per_node (" +
                          std::to_string(j.cluster.gpus_per_node) + ")",
                      "use --tp at most " + std::to_string(j.cluster.gpus_per_node));
  const int64_t per_step = j.dp * j.micro_batch;
  if (j.global_batch % per_step != 0)
    throw ConfigError(
        "global_batch",
        "global_batch (" + std::to_string(j.global_batch) +
            ") is not divisible by dp*micro_batch = " + std::to_string(per_step),
        "use a multiple of " + std::to_string(per_step) + ", e.g. " + multiples_near(j.global_batch, per_step));
  j.microbatches = j.global_batch / per_step;
  if (m.layers % (j.pp * j.vp) != 0)
    throw ConfigError(
        j.vp > 1 ? "vp" : "pp",
        "layers (" + std::to_string(m.layers) + ") must be divisible by pp*vp = " + std::to_string(j.pp * j.vp),
        "choose pp*vp among the divisors of " + std::to_string(m.layers) + ": " + divisors_text(m.layers));
  const auto& sched = schedules::ScheduleRegistry::instance().get(j.schedule, "schedule");
  schedules::check_schedule_shape(sched, static_cast<int>(j.pp), static_cast<int>(j.microbatches),
                                  static_cast<int>(j.vp));
  if (j.sp && j.tp == 1) j.sp = false;  // sequence parallelism is a no-op without TP
  if (j.zero == 3 && j.pp > 1)
    throw ConfigError("zero", "ZeRO-3 shards weights across data-parallel ranks and is not combined with pp > 1",
                      "use --zero 1 with pipeline parallelism, or --pp 1 with --zero 3");
  return j;
}

Json Job::to_json() const {
  Json out{{"model", model.name},
           {"cluster", cluster.name},
           {"gpu", gpu.name},
           {"gpus", gpus},
           {"tp", tp},
           {"pp", pp},
           {"dp", dp},
           {"vp", vp},
           {"sp", sp},
           {"zero", zero},
           {"recompute", recompute},
           {"micro_batch", micro_batch},
           {"global_batch", global_batch},
           {"microbatches", microbatches},
           {"seq_len", seq_len},
           {"schedule", schedule},
           {"precision", compute::to_string(precision)},
           {"attention", attention},
           {"overlap_grad_reduce", overlap_grad_reduce},
           {"overlap_p2p", overlap_p2p},
           {"scatter_gather", scatter_gather},
           {"bucket_size_bytes", bucket_size.count()},
           {"kernel_dispatch_s", kernel_dispatch.seconds()},
           {"network", network},
           {"seed", seed}};
  // Only when set, so that reports of uncalibrated runs are unchanged.
  if (calibration) out["calibration"] = calibration->name;
  return out;
}

}  // namespace trainsim::models::workload
