#pragma once
// A PyTorch profiler (Kineto) trace, read from the JSON that torch.profiler's
// export_chrome_trace writes: the CPU operators ("cpu_op", with "External id", "Input Dims",
// "Input type"), the runtime launches ("cuda_runtime" / "cuda_driver", with "correlation"), the
// GPU activities ("kernel", "gpu_memcpy", "gpu_memset" on pid = device, tid = stream, with
// "correlation" and "External id"; NCCL kernels also carry "Collective name", "In msg nelems",
// "Out msg nelems", "Group size", "dtype"), the ProfilerStep#N annotations, "deviceProperties" and
// "distributedInfo". docs/kineto.md gives the fields read and where each is documented.
//
// Each GPU activity is linked to the innermost CPU operator that launched it: by its
// "External id"; else through its "correlation" to the runtime launch and that launch's
// "External id"; else to the innermost operator on the launching thread whose span holds the
// launch. Times are integer nanoseconds (Kineto writes microseconds with three decimals).

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/schema.hpp"
#include "sim/units.hpp"

namespace trainsim::traces {

// A GPU activity: a kernel, a copy or a memset.
struct KinetoKernel {
  std::string name;
  std::string category;  // "kernel" | "gpu_memcpy" | "gpu_memset"
  int64_t device = 0;
  int64_t stream = 0;
  sim::Time start, duration;
  int64_t correlation = -1;
  int32_t op = -1;  // index into KinetoTrace::ops of the operator that launched it, -1: none found
  // NCCL kernels (from the launching record_param_comms operator); empty / 0 when absent.
  std::string collective;  // "Collective name" as written, e.g. "allreduce", "_allgather_base"
  int64_t in_nelems = 0, out_nelems = 0, group_size = 0;
  std::string dtype;  // e.g. "BFloat16"
  sim::Time end() const { return start + duration; }
};

// A CPU operator ("cpu_op") and the GPU activities it launched itself (not its children's).
struct KinetoOp {
  std::string name;  // e.g. "aten::mm"
  sim::Time start, duration;
  int64_t external_id = -1;
  int64_t thread = 0;
  // "Input Dims" and "Input type", one entry per argument; a non-tensor argument has no dims
  // (scalars, lists of tensors) and its type as written ("Scalar", "").
  std::vector<std::vector<int64_t>> input_dims;
  std::vector<std::string> input_types;
  std::vector<int32_t> kernels;  // indices into KinetoTrace::kernels, in start order
};

// One ProfilerStep#N: the GPU time window of the step.
struct KinetoStep {
  int64_t number = 0;
  sim::Time start, end;
};

struct KinetoTrace {
  std::string device_name;            // deviceProperties[0].name, e.g. "NVIDIA H100 80GB HBM3" ("" when absent)
  int64_t device_memory = 0;          // deviceProperties[0].totalGlobalMem (bytes, 0 when absent)
  int64_t rank = 0, world_size = 1;   // distributedInfo (0 of 1 when absent)
  std::vector<KinetoOp> ops;          // in start order
  std::vector<KinetoKernel> kernels;  // in start order
  // From gpu_user_annotation ProfilerStep#N when present, else from the user_annotation on the
  // CPU (the GPU window of what its operators launched); one step spanning every GPU activity
  // when the trace has no steps.
  std::vector<KinetoStep> steps;
  bool steps_annotated = false;  // false: the one step is the whole trace
  size_t unlinked_kernels = 0;   // GPU activities no operator could be found for
  sim::config::Json metadata;    // the "trainsim" object a trace written by `trainsim kineto export` carries
};

// Parses a trace held in `j`; errors name `path` (the file). Throws ConfigError when `j` is not a
// trace (no "traceEvents" array), when an event is malformed (the event's index and field), and
// when the trace holds no GPU kernel.
KinetoTrace parse_kineto_trace(const sim::config::Json& j, const std::string& path);
// Reads and parses the file (ConfigError: cannot read, not JSON, or as above).
KinetoTrace load_kineto_trace(const std::string& file);

}  // namespace trainsim::traces
