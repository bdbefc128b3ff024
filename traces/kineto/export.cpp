#include "traces/kineto/export.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "models/collectives/comm_model.hpp"
#include "models/llm/layer_kernels.hpp"
#include "models/llm/layer_ops.hpp"
#include "models/workload/run/simulate.hpp"
#include "sim/error.hpp"
#include "traces/kineto/devices.hpp"

namespace trainsim::traces {

using models::llm::KernelOp;
using models::llm::Kernels;
using models::workload::Workload;
using sim::config::Json;

namespace {

constexpr int64_t kCpuPid = 100, kCpuTid = 100;  // the host process and its Python thread
// Host-side shape of every launch: the operator starts this long before its kernel (when the
// host is ahead), lasts kOpSpan, and calls the launch kOpToLaunch into it for kLaunchSpan.
constexpr sim::Time kLead = sim::Time::us(10), kOpSpan = sim::Time::us(4), kOpToLaunch = sim::Time::us(1),
                    kLaunchSpan = sim::Time::us(2);
// Trace time of the iteration's start (host operators of the first kernel start before it).
constexpr sim::Time kBase = sim::Time::us(100);

// CUDA stream numbers per simulated stream (PyTorch's default stream shows as 7).
int64_t stream_number(const std::string& label) {
  static const char* const kLabels[] = {"compute", "tp", "dp", "pp", "cp", "ep", "d2h", "h2d"};
  for (int i = 0; i < 8; ++i)
    if (label == kLabels[i]) return 7 + 4 * i;
  return 60;
}

// Kineto writes ts/dur in microseconds with three decimals: integer nanoseconds / 1000.
Json micros(sim::Time t) { return Json(static_cast<double>(t.count_ns()) / 1000.0); }

// One GPU activity of the rank and what the host launched it from.
struct Activity {
  sim::Time start, end;
  int64_t stream = 7;
  std::string kernel, category = "kernel", launch = "cudaLaunchKernel";
  std::string op;  // the cpu_op's name
  Json op_args = Json::object();
  Json kernel_args = Json::object();
};

std::string dtype_name(models::compute::Precision p) {
  return p == models::compute::Precision::kFp16 ? "c10::Half" : "c10::BFloat16";
}

Json tensor_types(size_t n, const std::string& t) { return Json(std::vector<std::string>(n, t)); }

// The simulator's kernel list for a compute task label (layer_kernels / edge_kernels), or null.
const Kernels* kernels_for(const std::string& label, const models::llm::LayerKernels& lk,
                           const models::llm::EdgeKernels& ek) {
  const struct {
    const char* label;
    const Kernels* kernels;
  } table[] = {
      {"attn_norm_fwd", &lk.attn.pre_fwd},
      {"attn_fwd", &lk.attn.main_fwd},
      {"mlp_norm_fwd", &lk.mlp.pre_fwd},
      {"mlp_fwd", &lk.mlp.main_fwd},
      {"recompute_attn_norm", &lk.attn.pre_fwd},
      {"recompute_attn", &lk.attn.main_fwd},
      {"recompute_mlp_norm", &lk.mlp.pre_fwd},
      {"recompute_mlp", &lk.mlp.main_fwd},
      {"recompute_attn_core", &lk.attn.selective_recompute},
      {"attn_dgrad", &lk.attn.main_dgrad},
      {"attn_wgrad", &lk.attn.main_wgrad},
      {"attn_norm_bwd", &lk.attn.pre_bwd},
      {"mlp_dgrad", &lk.mlp.main_dgrad},
      {"mlp_wgrad", &lk.mlp.main_wgrad},
      {"mlp_norm_bwd", &lk.mlp.pre_bwd},
      {"embedding_fwd", &ek.embed_fwd},
      {"embedding_bwd", &ek.embed_bwd},
      {"lm_head_loss_fwd", &ek.head_fwd},
      {"lm_head_loss_dgrad", &ek.head_dgrad},
      {"lm_head_wgrad", &ek.head_wgrad},
  };
  for (const auto& e : table)
    if (label == e.label) return e.kernels;
  return nullptr;
}

// A memory-bound kernel as the ATen operator that would run it: `inputs` equal tensors of n
// elements, so that (inputs + 1 output) * n * 2 bytes is the kernel's traffic (what
// kineto_ops.cpp reads back).
struct MemoryRole {
  const char* marker;  // substring of the kernel name
  const char* op;
  int inputs;
};
constexpr MemoryRole kRoles[] = {
    {".residual.", "aten::add", 2},
    {"norm.fwd", "aten::native_layer_norm", 1},
    {"norm.bwd", "aten::native_layer_norm_backward", 3},
    {".rope.", "aten::mul", 1},
    {"act.fwd", "aten::silu", 1},
    {"act.bwd", "aten::silu_backward", 2},
    {"softmax.fwd", "aten::_softmax", 1},
    {"softmax.bwd", "aten::_softmax_backward_data", 2},
    {"dropout", "aten::native_dropout", 1},
    {"embed.gather", "aten::embedding", 1},
    {"embed.position", "aten::add", 2},
    {"embed.", "aten::embedding_dense_backward", 1},
    {"loss.bwd", "aten::_log_softmax_backward_data", 2},
    {"loss", "aten::_log_softmax", 1},
};

void describe_memory(const KernelOp& k, int64_t row, const std::string& type, Activity& a) {
  MemoryRole role{"", "aten::copy_", 1};
  for (const MemoryRole& r : kRoles)
    if (k.name.find(r.marker) != std::string::npos) {
      role = r;
      break;
    }
  const int inputs = role.inputs;
  const int64_t n = std::llround(static_cast<double>(static_cast<int64_t>(k.bytes)) / (2.0 * (inputs + 1)));
  Json dims = Json::array();
  for (int i = 0; i < inputs; ++i)
    dims.push_back(row > 0 && n % row == 0 && n > 0 ? Json::array({n / row, row}) : Json::array({n}));
  a.op = role.op;
  a.op_args["Input Dims"] = dims;
  a.op_args["Input type"] = tensor_types(static_cast<size_t>(inputs), type);
  a.kernel = std::string("vectorized_elementwise_kernel<") + k.name + ">";
}

}  // namespace

namespace {

struct NcclNames {
  const char* kernel;
  const char* collective;  // c10d's name, as record_param_comms records it
};
NcclNames nccl_names(models::collectives::CollectiveOp op) {
  using models::collectives::CollectiveOp;
  switch (op) {
    case CollectiveOp::kAllReduce: return {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "allreduce"};
    case CollectiveOp::kAllGather: return {"ncclDevKernel_AllGather_RING_LL", "_allgather_base"};
    case CollectiveOp::kReduceScatter: return {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "_reduce_scatter_base"};
    case CollectiveOp::kAllToAll: return {"ncclDevKernel_SendRecv", "all_to_all"};
    case CollectiveOp::kBroadcast: return {"ncclDevKernel_Broadcast_RING_LL", "broadcast"};
    case CollectiveOp::kReduce: return {"ncclDevKernel_Reduce_Sum_bf16_RING_LL", "reduce"};
    case CollectiveOp::kSendRecv: return {"ncclDevKernel_SendRecv", "send"};
  }
  return {"ncclDevKernel_Generic", "unknown"};
}

void describe_collective(const Workload& w, uint32_t comm, const std::string& group, int64_t rank, Activity& a) {
  using models::collectives::CollectiveOp;
  const models::workload::CommInfo& ci = w.comms[comm];
  const auto n = static_cast<int64_t>(w.groups[ci.group].size());
  const NcclNames names = nccl_names(ci.op);
  // Per-rank buffer in bf16 elements; a gather's input and a scatter's output are 1/n of it.
  const int64_t elems = ci.bytes.count() / 2;
  const int64_t in = ci.op == CollectiveOp::kAllGather ? elems / n : elems;
  const int64_t out = ci.op == CollectiveOp::kReduceScatter ? elems / n : elems;
  Json coll = {{"Collective name", names.collective},
               {"dtype", "BFloat16"},
               {"In msg nelems", in},
               {"Out msg nelems", out},
               {"Group size", n},
               {"Process Group Name", group},
               {"Process Group Description", group + "_group"}};
  a.op = "record_param_comms";
  a.op_args = coll;
  a.op_args["Rank"] = rank;
  a.kernel = names.kernel;
  a.kernel_args = coll;
}

// The GPU activities of the stage's representative rank, from the recorded task times.
std::vector<Activity> activities(const models::workload::Job& job, const Workload& w, int64_t stage, int64_t rank,
                                 const std::vector<sim::Time>& start, const std::vector<sim::Time>& end) {
  const sim::task::TaskGraph& g = w.graph;
  const models::workload::RankInfo* info = nullptr;
  for (const auto& r : w.ranks)
    if (r.stage == stage) {
      info = &r;
      break;
    }
  TRAINSIM_ASSERT(info != nullptr, "no simulated rank for stage ", stage);
  const models::compute::ComputeModel cm(job.gpu, job.precision);
  const models::llm::LayerShape shape{
      job.micro_batch, job.seq_len / job.cp, job.tp, job.sp, job.attention == models::workload::Attention::kFlash,
      job.cp};
  const models::llm::LayerKernels lk = models::llm::layer_kernels(job.model, shape);
  const models::llm::EdgeKernels ek = models::llm::edge_kernels(job.model, shape);
  const std::string type = dtype_name(job.precision);
  const int64_t b = job.micro_batch, sq = job.seq_len / job.cp, skv = sq * job.cp, d = job.model.head_dim();
  const int64_t hq = job.model.heads / job.tp, hkv = std::max<int64_t>(1, job.model.kv_heads_or_heads() / job.tp);

  std::vector<Activity> out;
  std::vector<bool> seen(g.size(), false);
  const sim::task::StreamId streams[] = {info->compute, info->tp, info->dp,  info->pp,
                                         info->cp,      info->ep, info->d2h, info->h2d};
  for (sim::task::StreamId s : streams) {
    if (s == models::workload::kNoStream) continue;
    const std::string slabel = g.label(g.stream(s).label);
    const int64_t stream = stream_number(slabel);
    for (sim::task::TaskIndex i : g.stream_tasks(s)) {
      if (seen[i] || start[i].count_ns() < 0 || end[i].count_ns() < 0) continue;
      seen[i] = true;
      const sim::task::TaskSpec& spec = g.task(i).spec;
      const std::string label = g.label(spec.label);
      Activity a;
      a.start = start[i];
      a.end = end[i];
      a.stream = stream;
      if (w.task_comm[i] != Workload::kNoComm) {
        describe_collective(w, w.task_comm[i], slabel, rank, a);
        out.push_back(std::move(a));
        continue;
      }
      if (spec.kind == sim::task::TaskKind::kMemory) {
        const int64_t n = spec.bytes.count() / 2;
        a.category = "gpu_memcpy";
        a.launch = "cudaMemcpyAsync";
        a.kernel = slabel == "h2d" ? "Memcpy HtoD (Pinned -> Device)" : "Memcpy DtoH (Device -> Pinned)";
        a.op = "aten::copy_";
        a.op_args = {{"Input Dims", Json::array({Json::array({n}), Json::array({n})})},
                     {"Input type", tensor_types(2, type)}};
        a.kernel_args = {{"bytes", spec.bytes.count()}};
        out.push_back(std::move(a));
        continue;
      }
      if (slabel == "d2h" || slabel == "h2d") continue;  // the CPU optimizer step: host work, no GPU activity
      const Kernels* ks = spec.kind == sim::task::TaskKind::kCompute ? kernels_for(label, lk, ek) : nullptr;
      if (ks) {
        // Eager: the host's dispatch per kernel; in a CUDA graph (cuda_graph_scope) one launch or none.
        const models::llm::Cost c = models::llm::kernels_cost(*ks, cm);
        const sim::Time d = spec.duration;
        if (d != c.with_dispatch(job.kernel_dispatch) && d != c.time && d != std::max(c.time, job.kernel_dispatch))
          ks = nullptr;
      }
      if (!ks) {  // one opaque kernel: what the task is made of is not a layer_kernels list
        a.op = "trainsim::" + label;
        a.kernel = "trainsim_" + label + "_kernel";
        out.push_back(std::move(a));
        continue;
      }
      // The task's kernels back to back from its start (a host-bound task idles at its end).
      sim::Time t = start[i];
      for (const KernelOp& k : *ks) {
        const sim::Time dur = models::llm::kernel_cost(k, cm).time;
        Activity ka;
        ka.start = t;
        ka.end = t + dur;
        ka.stream = stream;
        t = ka.end;
        switch (k.kind) {
          case KernelOp::Kind::kGemm: {
            const auto& s2 = k.gemm;
            const bool batched = s2.batch > 1;
            ka.op = batched ? "aten::bmm" : "aten::mm";
            ka.op_args["Input Dims"] =
                batched ? Json::array({Json::array({s2.batch, s2.m, s2.k}), Json::array({s2.batch, s2.k, s2.n})})
                        : Json::array({Json::array({s2.m, s2.k}), Json::array({s2.k, s2.n})});
            ka.op_args["Input type"] = tensor_types(2, type);
            ka.kernel = std::string("sm90_xmma_gemm_bf16bf16_bf16f32_f32_") + models::llm::to_string(k.layout) +
                        "_n_cublas <" + k.name + ">";
            break;
          }
          case KernelOp::Kind::kAttentionFwd:
          case KernelOp::Kind::kAttentionBwd: {
            const bool bwd = k.kind == KernelOp::Kind::kAttentionBwd;
            const Json q = Json::array({b, hq, sq, d}), kv = Json::array({b, hkv, skv, d});
            const double fwd_flops = 2.0 * static_cast<double>(b * hq) * static_cast<double>(sq) *
                                     static_cast<double>(skv) * static_cast<double>(d);
            if (std::abs((bwd ? 2.5 : 1.0) * fwd_flops - k.flops) > 1e-9 * k.flops) {
              ka.op = "trainsim::" + k.name;  // a shape the dims cannot carry: opaque
              ka.kernel = "trainsim_attention_kernel";
              break;
            }
            if (bwd) {
              ka.op = "aten::_scaled_dot_product_flash_attention_backward";
              ka.op_args["Input Dims"] =
                  Json::array({q, q, kv, kv, q, Json::array({b, hq, sq}), Json::array(), Json::array()});
              ka.op_args["Input type"] = {type, type, type, type, type, "float", "", ""};
              ka.kernel = "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel";
            } else {
              ka.op = "aten::_scaled_dot_product_flash_attention";
              ka.op_args["Input Dims"] = Json::array({q, kv, kv, Json::array(), Json::array(), Json::array()});
              ka.op_args["Input type"] = {type, type, type, "Scalar", "Scalar", "Scalar"};
              ka.op_args["Concrete Inputs"] = {"", "", "", "0.", "True", "False"};
              ka.kernel = "flash_fwd_kernel";
            }
            break;
          }
          case KernelOp::Kind::kMemory: describe_memory(k, job.model.hidden, type, ka); break;
        }
        out.push_back(std::move(ka));
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Activity& x, const Activity& y) {
    if (x.start != y.start) return x.start < y.start;
    return x.stream < y.stream;
  });
  return out;
}

Json x_event(const std::string& cat, const std::string& name, int64_t pid, int64_t tid, sim::Time ts, sim::Time dur,
             Json args) {
  Json e = {{"ph", "X"},  {"cat", cat},       {"name", name},      {"pid", pid},
            {"tid", tid}, {"ts", micros(ts)}, {"dur", micros(dur)}};
  if (!args.empty()) e["args"] = std::move(args);
  return e;
}

Json meta_event(const std::string& name, int64_t pid, int64_t tid, Json args) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"ts", 0}, {"args", std::move(args)}};
}

}  // namespace

Json export_kineto(const models::workload::Job& job, int64_t rank) {
  if (rank < 0 || rank >= job.gpus) {
    std::ostringstream msg, hint;
    msg << "rank " << rank << " is outside the job's " << job.gpus << " GPUs";
    hint << "give a rank from 0 to " << job.gpus - 1;
    throw ConfigError("--rank", msg.str(), hint.str());
  }
  if (models::compute::quantized(job.precision))
    throw ConfigError("precision",
                      "kineto export writes bf16 and fp16 jobs: the simulator folds fp8's cast into each GEMM",
                      "use --precision bf16");
  const int64_t stage = rank / (job.tp * job.cp * job.dp);
  std::vector<sim::Time> start, end;
  std::vector<Activity> acts;
  models::workload::SimulateOptions opt;
  opt.before_run = [&](sim::Engine& engine, const Workload& w) {
    start.assign(w.graph.size(), sim::Time::ns(-1));
    end = start;
    engine.signals().on_task_start.connect([&start](sim::TaskIndex i, sim::Time t) { start[i] = t; });
    engine.signals().on_task_end.connect([&end](sim::TaskIndex i, sim::Time t) { end[i] = t; });
  };
  opt.after_run = [&](const Workload& w, const sim::task::TaskExecutor&) {
    acts = activities(job, w, stage, rank, start, end);
  };
  const models::workload::SimulationResult r = models::workload::simulate(job, opt);
  if (!r.fits)
    throw PlanError("kineto export", "the job does not fit in memory, so it has no iteration to write",
                    "run `trainsim simulate` with the same flags for the memory report");

  const int64_t device = rank % std::max<int64_t>(1, job.cluster.gpus_per_node);
  Json events = Json::array();
  events.push_back(meta_event("process_name", kCpuPid, 0, {{"name", "python"}}));
  events.push_back(meta_event("thread_name", kCpuPid, kCpuTid, {{"name", "thread 100 (python)"}}));
  events.push_back(meta_event("process_name", device, 0, {{"name", "GPU " + std::to_string(device)}}));
  std::vector<int64_t> streams;
  for (const Activity& a : acts)
    if (std::find(streams.begin(), streams.end(), a.stream) == streams.end()) streams.push_back(a.stream);
  std::sort(streams.begin(), streams.end());
  for (int64_t s : streams)
    events.push_back(meta_event("thread_name", device, s, {{"name", "stream " + std::to_string(s)}}));

  sim::Time cursor = kBase - kLead, first_op = sim::Time::infinite();
  int64_t id = 0;
  for (const Activity& a : acts) {
    ++id;
    const sim::Time ks = kBase + a.start;
    const sim::Time op_start = std::max(cursor, ks - kLead);
    first_op = std::min(first_op, op_start);
    cursor = op_start + kOpSpan;
    const sim::Time launch = op_start + kOpToLaunch;
    Json op_args = a.op_args;
    op_args["External id"] = id;
    op_args["Record function id"] = 0;
    op_args["Sequence number"] = id;
    op_args["Fwd thread id"] = 0;
    events.push_back(x_event("cpu_op", a.op, kCpuPid, kCpuTid, op_start, kOpSpan, std::move(op_args)));
    events.push_back(x_event("cuda_runtime", a.launch, kCpuPid, kCpuTid, launch, kLaunchSpan,
                             {{"External id", id}, {"correlation", id}}));
    Json kargs = a.kernel_args;
    kargs["External id"] = id;
    kargs["device"] = device;
    kargs["stream"] = a.stream;
    kargs["correlation"] = id;
    kargs["context"] = 1;
    events.push_back(x_event(a.category, a.kernel, device, a.stream, ks, a.end - a.start, std::move(kargs)));
    events.push_back({{"ph", "s"},
                      {"id", id},
                      {"pid", kCpuPid},
                      {"tid", kCpuTid},
                      {"ts", micros(launch)},
                      {"cat", "ac2g"},
                      {"name", "ac2g"}});
    events.push_back({{"ph", "f"},
                      {"id", id},
                      {"pid", device},
                      {"tid", a.stream},
                      {"ts", micros(ks)},
                      {"cat", "ac2g"},
                      {"name", "ac2g"},
                      {"bp", "e"}});
  }
  const sim::Time step_end = kBase + r.iteration;
  if (first_op == sim::Time::infinite()) first_op = kBase;
  events.push_back(x_event("user_annotation", "ProfilerStep#0", kCpuPid, kCpuTid, first_op,
                           std::max(cursor, step_end) - first_op, {{"External id", 0}}));
  events.push_back(x_event("gpu_user_annotation", "ProfilerStep#0", device, 7, kBase, r.iteration, {}));

  Json trace = Json::object();
  trace["schemaVersion"] = 1;
  trace["deviceProperties"] = Json::array({{{"id", device},
                                            {"name", device_name_for_preset(job.gpu.name)},
                                            {"totalGlobalMem", job.gpu.memory.count()},
                                            {"numSms", job.gpu.sms}}});
  trace["distributedInfo"] = {{"backend", "nccl"}, {"rank", rank}, {"world_size", job.gpus}};
  trace["trainsim"] = {{"generator", "trainsim kineto export"},
                       {"stage", stage},
                       {"iteration_ns", r.iteration.count_ns()},
                       {"job", job.to_json()}};
  trace["displayTimeUnit"] = "ms";
  trace["baseTimeNanoseconds"] = 0;
  trace["traceEvents"] = std::move(events);
  return trace;
}

void write_kineto(std::ostream& os, const Json& trace) {
  static const char* const kOrder[] = {"schemaVersion", "deviceProperties", "distributedInfo",
                                       "trainsim",      "displayTimeUnit",  "baseTimeNanoseconds"};
  os << "{\n";
  bool first = true;
  auto key = [&](const std::string& k) {
    os << (first ? "  " : ",\n  ") << Json(k).dump() << ": ";
    first = false;
  };
  for (const char* k : kOrder)
    if (trace.contains(k)) {
      key(k);
      os << trace.at(k).dump();
    }
  for (auto it = trace.begin(); it != trace.end(); ++it) {
    if (it.key() == "traceEvents" || std::find(std::begin(kOrder), std::end(kOrder), it.key()) != std::end(kOrder))
      continue;
    key(it.key());
    os << it.value().dump();
  }
  key("traceEvents");
  os << "[";
  const Json& events = trace.contains("traceEvents") ? trace.at("traceEvents") : Json::array();
  for (size_t i = 0; i < events.size(); ++i) os << (i ? ",\n  " : "\n  ") << events[i].dump();
  os << "\n  ]\n}\n";
}

void write_kineto_file(const std::string& file, const Json& trace, const std::string& flag) {
  std::ofstream f(file);
  if (!f) throw ConfigError(flag, "cannot write " + file, "give a writable path");
  write_kineto(f, trace);
  if (!f) throw ConfigError(flag, "cannot write " + file, "give a writable path");
}

}  // namespace trainsim::traces
