// The GPU replay backend (validator/replay/backend.hpp): one process per GPU; each of the rank's
// streams a CUDA stream; GEMM-bound compute ops a square bf16 cuBLASLt GEMM of the same FLOPs,
// others a device-side wait of their simulated duration; transfers ncclSend / ncclRecv on the
// world communicator; collectives on communicators split from it per group (ncclCommSplit,
// members in the job's layout order). Ops are enqueued ahead in stream order and wait for other
// streams' ops through events; each is timed by its own start and end events, and completes when
// its end event has (cudaEventQuery: never blocks).
#include <cuda_bf16.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "models/workload/run/simulate.hpp"
#include "sim/error.hpp"
#include "validator/gpu/buffers.hpp"
#include "validator/gpu/check.hpp"
#include "validator/gpu/gemm.hpp"
#include "validator/gpu/world.hpp"
#include "validator/replay/gpu_backend.hpp"
#include "validator/replay/mpi_backend.hpp"
#include "validator/runner.hpp"

namespace trainsim::validator::replay {

namespace {

namespace col = models::collectives;
using gpu::DeviceBuffer;

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The side of a square GEMM doing `flops` (2 d^3), a multiple of 64 in [64, 16384].
int64_t gemm_side(double flops) {
  const double d = std::cbrt(std::max(flops, 0.0) / 2.0);
  return std::clamp<int64_t>(static_cast<int64_t>(std::llround(d / 64.0)) * 64, 64, 16384);
}

class GpuBackend final : public Backend {
 public:
  // `peak`: the GPU's dense bf16 rate (FLOP/s), which tells GEMM-bound ops from the others.
  GpuBackend(double timeout_s, double peak) : peak_(peak), host_(0, timeout_s) {}
  ~GpuBackend() override {
    for (auto& [g, c] : comms_) ncclCommDestroy(c);
    if (world_comm_) ncclCommDestroy(world_comm_);
    for (auto& [d, p] : plans_) gemm_->destroy(p);
    for (auto& [i, f] : inflight_) {
      cudaEventDestroy(f.start);
      cudaEventDestroy(f.end);
    }
    if (t0_event_) cudaEventDestroy(t0_event_);
    for (cudaStream_t s : streams_) cudaStreamDestroy(s);
  }
  std::string name() const override { return "gpu (CUDA + NCCL)"; }
  int rank() const override { return world_.rank(); }
  int size() const override { return world_.size(); }

  // Device, NCCL world communicator; throws NoGpuError when they cannot be had.
  void open() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
      throw NoGpuError("no CUDA device is visible (use --backend cpu to replay on the CPU)");
    if (world_.local_size() > devices)
      throw NoGpuError(std::to_string(world_.local_size()) + " ranks on this node but " + std::to_string(devices) +
                       " GPU(s): NCCL does not put two ranks of one communicator on one GPU (run on a node with a "
                       "GPU per rank, or use --backend cpu)");
    TRAINSIM_CUDA(cudaSetDevice(world_.local_rank() % devices));
    host_.synchronize();  // every rank is here (a bounded wait) before NCCL's blocking init
    ncclUniqueId id{};
    if (world_.rank() == 0 && ncclGetUniqueId(&id) != ncclSuccess)
      throw NoGpuError("NCCL could not start (ncclGetUniqueId failed)");
    world_.broadcast(&id, static_cast<int>(sizeof id));
    if (ncclCommInitRank(&world_comm_, world_.size(), id, world_.rank()) != ncclSuccess)
      throw NoGpuError("NCCL could not start its communicator over " + std::to_string(world_.size()) + " ranks");
    gemm_ = std::make_unique<gpu::GemmRunner>();
  }

  void setup(const Program& program) override {
    program_ = &program;
    const RankProgram& mine = program.ranks.at(static_cast<size_t>(rank()));
    for (size_t s = 0; s < mine.streams.size(); ++s) {
      cudaStream_t st = nullptr;
      TRAINSIM_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
      streams_.push_back(st);
    }
    std::vector<int32_t> used;
    for (const auto& rp : program.ranks)
      for (const Op& op : rp.ops)
        if (op.kind == OpKind::kCollective) used.push_back(op.group);
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    for (const int32_t g : used) {  // every rank splits every group, in the same order
      const auto& members = program.groups[static_cast<size_t>(g)];
      const auto it = std::find(members.begin(), members.end(), rank());
      const int color = it == members.end() ? NCCL_SPLIT_NOCOLOR : 0;
      ncclComm_t c = nullptr;
      TRAINSIM_NCCL(ncclCommSplit(world_comm_, color, static_cast<int>(it - members.begin()), &c, nullptr));
      if (c) comms_[g] = c;
    }
    size_t largest = 1;
    int64_t side = 64;
    for (const Op& op : mine.ops) {
      const size_t n = op.kind == OpKind::kCollective ? program.groups[static_cast<size_t>(op.group)].size() : 1;
      largest = std::max(largest, static_cast<size_t>(op.bytes) * n);
      if (gemm_bound(op)) side = std::max(side, gemm_side(op.flops));
    }
    send_ = DeviceBuffer(largest);
    recv_ = DeviceBuffer(largest);
    const size_t square = static_cast<size_t>(side * side) * 2;
    a_ = DeviceBuffer(square);
    b_ = DeviceBuffer(square);
    c_ = DeviceBuffer(square);
    gpu::fill_bf16(a_.get(), square / 2, 1.0f, 7 + static_cast<uint64_t>(rank()), streams_.front());
    gpu::fill_bf16(b_.get(), square / 2, 1.0f, 13 + static_cast<uint64_t>(rank()), streams_.front());
    // Warm-up: each GEMM size's plan and first launch (module loading, heuristics) before timing.
    for (const Op& op : mine.ops)
      if (gemm_bound(op)) gemm_->run(plan_for(gemm_side(op.flops)), a_.get(), b_.get(), c_.get(), 0, streams_.front());
    TRAINSIM_CUDA(cudaDeviceSynchronize());
  }

  // Ops are enqueued as a framework enqueues them: in stream order, waiting on the device (events)
  // for the ops of other streams they depend on.
  bool orders_on_device() const override { return true; }
  bool device_times(uint32_t i, double& start, double& end) const override {
    const auto it = times_.find(i);
    if (it == times_.end()) return false;
    start = it->second.first;
    end = it->second.second;
    return true;
  }

  void start(uint32_t i, const Op& op, double scale) override {
    cudaStream_t s = streams_.at(op.stream);
    for (const uint32_t d : op.deps) {
      const auto dep = inflight_.find(d);
      if (dep != inflight_.end()) TRAINSIM_CUDA(cudaStreamWaitEvent(s, dep->second.end, 0));
    }
    auto& f = inflight_[i];
    TRAINSIM_CUDA(cudaEventCreate(&f.start));
    TRAINSIM_CUDA(cudaEventCreate(&f.end));
    TRAINSIM_CUDA(cudaEventRecord(f.start, s));
    const size_t elems = static_cast<size_t>(op.bytes) / 2;  // bf16
    switch (op.kind) {
      case OpKind::kCompute:
        if (gemm_bound(op)) {
          gemm_->run(plan_for(gemm_side(op.flops)), a_.get(), b_.get(), c_.get(), 0, s);
        } else {
          gpu::launch_wait(op.sim_duration.seconds() * scale, s);
        }
        break;
      case OpKind::kSend: TRAINSIM_NCCL(ncclSend(send_.get(), elems, ncclBfloat16, op.peer, world_comm_, s)); break;
      case OpKind::kRecv:
        TRAINSIM_NCCL(ncclRecv(recv_.get(), elems, ncclBfloat16, op.peer, world_comm_, s));
        gpu::launch_wait(op.extra.seconds() * scale, s);
        break;
      case OpKind::kCollective: collective(op, elems, s); break;
    }
    TRAINSIM_CUDA(cudaEventRecord(f.end, s));
  }

  bool done(uint32_t i) override {
    auto it = inflight_.find(i);
    const cudaError_t e = cudaEventQuery(it->second.end);
    if (e == cudaErrorNotReady) return false;
    TRAINSIM_CUDA(e);
    float a = 0, b = 0;
    TRAINSIM_CUDA(cudaEventElapsedTime(&a, t0_event_, it->second.start));
    TRAINSIM_CUDA(cudaEventElapsedTime(&b, t0_event_, it->second.end));
    times_[i] = {1e-3 * a, 1e-3 * b};
    cudaEventDestroy(it->second.start);
    cudaEventDestroy(it->second.end);
    inflight_.erase(it);
    return true;
  }

  double now() const override { return steady_seconds() - t0_; }
  // The clocks restart together: the host's, and the device's reference event.
  void synchronize() override {
    TRAINSIM_CUDA(cudaDeviceSynchronize());
    host_.synchronize();  // MPI's barrier, polled with the timeout
    if (!t0_event_) TRAINSIM_CUDA(cudaEventCreate(&t0_event_));
    TRAINSIM_CUDA(cudaEventRecord(t0_event_, nullptr));
    TRAINSIM_CUDA(cudaEventSynchronize(t0_event_));
    t0_ = steady_seconds();
  }
  // Through MPI like the CPU backend (bounded waits): the timelines are host data.
  std::vector<std::string> gather(const std::string& mine) override { return host_.gather(mine); }

 private:
  // An op the simulation ran at 10% of the bf16 peak or more is GEMM-bound: it runs as a square
  // GEMM of its FLOPs. The others (norms, activations, the optimizer step, copies) would be
  // misrepresented by a GEMM: they wait on the device for their simulated time.
  bool gemm_bound(const Op& op) const {
    const double t = op.sim_duration.seconds();
    return op.kind == OpKind::kCompute && op.flops > 0 && t > 0 && op.flops / t >= 0.1 * peak_;
  }
  const gpu::GemmRunner::Plan& plan_for(int64_t d) {
    auto it = plans_.find(d);
    if (it == plans_.end())
      it = plans_.emplace(d, gemm_->plan(models::compute::GemmShape{d, d, d, 1}, "TN", false, 1)).first;
    return it->second;
  }

  void collective(const Op& op, size_t elems, cudaStream_t s) {
    ncclComm_t c = comms_.at(op.group);
    int n = 1;
    TRAINSIM_NCCL(ncclCommCount(c, &n));
    const size_t per = std::max<size_t>(1, elems / static_cast<size_t>(n));
    switch (op.collective) {
      case col::CollectiveOp::kAllReduce:
        TRAINSIM_NCCL(ncclAllReduce(send_.get(), recv_.get(), elems, ncclBfloat16, ncclSum, c, s));
        break;
      case col::CollectiveOp::kAllGather:
        TRAINSIM_NCCL(ncclAllGather(send_.get(), recv_.get(), per, ncclBfloat16, c, s));
        break;
      case col::CollectiveOp::kReduceScatter:
        TRAINSIM_NCCL(ncclReduceScatter(send_.get(), recv_.get(), per, ncclBfloat16, ncclSum, c, s));
        break;
      case col::CollectiveOp::kBroadcast:
        TRAINSIM_NCCL(ncclBroadcast(send_.get(), recv_.get(), elems, ncclBfloat16, 0, c, s));
        break;
      case col::CollectiveOp::kReduce:
        TRAINSIM_NCCL(ncclReduce(send_.get(), recv_.get(), elems, ncclBfloat16, ncclSum, 0, c, s));
        break;
      case col::CollectiveOp::kAllToAll:
      case col::CollectiveOp::kSendRecv:
        TRAINSIM_NCCL(ncclGroupStart());
        for (int p = 0; p < n; ++p) {
          TRAINSIM_NCCL(ncclSend(send_.as<__nv_bfloat16>() + per * static_cast<size_t>(p), per, ncclBfloat16, p, c, s));
          TRAINSIM_NCCL(ncclRecv(recv_.as<__nv_bfloat16>() + per * static_cast<size_t>(p), per, ncclBfloat16, p, c, s));
        }
        TRAINSIM_NCCL(ncclGroupEnd());
        break;
    }
  }

  struct InFlight {
    cudaEvent_t start = nullptr, end = nullptr;
  };
  cudaEvent_t t0_event_ = nullptr;
  std::map<uint32_t, std::pair<double, double>> times_;  // device start and end of completed ops
  double peak_;
  gpu::World world_;  // first: initialises MPI under mpirun, before host_ looks
  MpiBackend host_;   // host-side barrier and gather, with timeouts
  ncclComm_t world_comm_ = nullptr;
  std::map<int32_t, ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  std::unique_ptr<gpu::GemmRunner> gemm_;
  std::map<int64_t, gpu::GemmRunner::Plan> plans_;
  DeviceBuffer send_, recv_, a_, b_, c_;
  std::map<uint32_t, InFlight> inflight_;
  const Program* program_ = nullptr;
  double t0_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_gpu_backend(const models::workload::Job& job, double timeout_s) {
  auto b = std::make_unique<GpuBackend>(timeout_s, job.gpu.peak_bf16.per_second());
  b->open();
  // The plan's memory per GPU against the device's: a plan that cannot fit is not replayed.
  size_t free_b = 0, total = 0;
  TRAINSIM_CUDA(cudaMemGetInfo(&free_b, &total));
  double need = 0;
  for (const auto& st : models::workload::stage_memory_reports(job))
    need = std::max(need, static_cast<double>(st.memory.total().count()));
  if (need > static_cast<double>(total)) {
    char text[160];
    std::snprintf(text, sizeof text, "the plan needs %.2f GiB per GPU but this device has %.2f GiB",
                  need / 1073741824.0, static_cast<double>(total) / 1073741824.0);
    throw PlanError("GPU memory", text, "replay a plan that fits this GPU, or use --backend cpu");
  }
  return b;
}

}  // namespace trainsim::validator::replay
