#include "validator/gpu/collectives.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#include "validator/gpu/buffers.hpp"
#include "validator/gpu/check.hpp"
#include "validator/gpu/timing.hpp"

namespace trainsim::validator::gpu {

namespace calibration = models::calibration;

std::vector<calibration::Measurement> measure_collectives(const World& world, const std::vector<CollectiveCase>& cases,
                                                          int gpus_per_node, int warmup, int reps) {
  const int n = world.size();
  // NCCL_PROTO pinned to one protocol (run once per protocol: NCCL_PROTO=LL, LL128, Simple) labels
  // the records, so the fit can scale that protocol's entries (models/calibration/fit_protocols).
  std::string protocol;
  if (const char* env = std::getenv("NCCL_PROTO"); env != nullptr) {
    std::string v = env;
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (v == "ll" || v == "ll128" || v == "simple") protocol = v;
  }
  ncclUniqueId id{};
  if (world.rank() == 0) TRAINSIM_NCCL(ncclGetUniqueId(&id));
  world.broadcast(&id, static_cast<int>(sizeof id));
  ncclComm_t comm = nullptr;
  TRAINSIM_NCCL(ncclCommInitRank(&comm, n, id, world.rank()));
  cudaStream_t s = nullptr;
  TRAINSIM_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  int64_t largest = 0;
  for (const auto& c : cases) largest = std::max(largest, c.bytes);
  // all_gather writes n x size; reduce_scatter reads n x size (nccl-tests sizes are per rank).
  const size_t big = static_cast<size_t>(largest) * static_cast<size_t>(n);
  DeviceBuffer send(big), recv(big);
  fill_bf16(send.get(), big / 2, 1.0f, 11 + static_cast<uint64_t>(world.rank()), s);
  fill_bf16(recv.get(), big / 2, 1.0f, 29 + static_cast<uint64_t>(world.rank()), s);

  std::vector<calibration::Measurement> out;
  for (const CollectiveCase& c : cases) {
    const size_t count = static_cast<size_t>(c.bytes) / 2;  // bf16 elements per rank
    auto work = [&](int) {
      if (c.op == "all_reduce") {
        TRAINSIM_NCCL(ncclAllReduce(send.get(), recv.get(), count, ncclBfloat16, ncclSum, comm, s));
      } else if (c.op == "all_gather") {
        TRAINSIM_NCCL(ncclAllGather(send.get(), recv.get(), count, ncclBfloat16, comm, s));
      } else if (c.op == "reduce_scatter") {
        TRAINSIM_NCCL(ncclReduceScatter(send.get(), recv.get(), count, ncclBfloat16, ncclSum, comm, s));
      } else if (c.op == "all_to_all") {
        const size_t per_peer = count / static_cast<size_t>(n);
        TRAINSIM_NCCL(ncclGroupStart());
        for (int p = 0; p < n; ++p) {
          TRAINSIM_NCCL(ncclSend(send.as<__nv_bfloat16>() + per_peer * static_cast<size_t>(p), per_peer, ncclBfloat16,
                                 p, comm, s));
          TRAINSIM_NCCL(ncclRecv(recv.as<__nv_bfloat16>() + per_peer * static_cast<size_t>(p), per_peer, ncclBfloat16,
                                 p, comm, s));
        }
        TRAINSIM_NCCL(ncclGroupEnd());
      } else {  // send_recv: a ring shift, every rank sends to the next and receives from the previous
        TRAINSIM_NCCL(ncclGroupStart());
        TRAINSIM_NCCL(ncclSend(send.get(), count, ncclBfloat16, (world.rank() + 1) % n, comm, s));
        TRAINSIM_NCCL(ncclRecv(recv.get(), count, ncclBfloat16, (world.rank() + n - 1) % n, comm, s));
        TRAINSIM_NCCL(ncclGroupEnd());
      }
    };
    world.barrier();
    const double t = world.max(median_time(s, warmup, reps, work));
    calibration::Measurement m;
    m.name = c.name;
    m.kind = calibration::OpKind::kCollective;
    m.op = c.op;
    m.bytes = c.bytes;
    m.ranks = n;
    m.link_class = n == 1 ? "local" : (n <= gpus_per_node && world.local_size() == n ? "nvlink" : "ib");
    m.protocol = protocol;
    m.measured_s = t;
    m.reps = reps;
    out.push_back(m);
  }
  TRAINSIM_CUDA(cudaStreamSynchronize(s));
  TRAINSIM_CUDA(cudaStreamDestroy(s));
  ncclCommDestroy(comm);
  return out;
}

}  // namespace trainsim::validator::gpu
