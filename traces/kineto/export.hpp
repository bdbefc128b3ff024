#pragma once
// A simulated iteration written as a PyTorch profiler (Kineto) trace of one rank: what
// `trainsim kineto export` writes, and what `kineto compare` sets against a real trace. Each
// compute task of the rank becomes the kernels the simulator priced it from (layer_kernels: a
// cpu_op with "Input Dims" and "Input type", its cudaLaunchKernel with a "correlation", the
// kernel on its stream, and the ac2g flow between them), each communication task an NCCL kernel
// launched by record_param_comms with "Collective name", "In msg nelems", "Group size", each host
// copy a gpu_memcpy; the iteration is ProfilerStep#0. Tasks whose kernels cannot be told apart
// (MoE blocks, context-parallel and TP-overlap splits, the optimizer) are one opaque kernel
// named after the task, without dims. Output is deterministic byte for byte.

#include <cstdint>
#include <ostream>
#include <string>

#include "models/workload/job/job.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::traces {

// Simulates `job` and returns the trace of global rank `rank` (the representative of its
// pipeline stage). Throws ConfigError for a rank outside the job or an fp8 job (the simulator
// folds the fp8 cast into each GEMM, which a trace would show as its own kernel), PlanError when
// the job does not fit in memory.
sim::config::Json export_kineto(const models::workload::Job& job, int64_t rank);

// Writes the trace with one event per line (the layout export_chrome_trace uses, minus spaces).
void write_kineto(std::ostream& os, const sim::config::Json& trace);
// write_kineto() to `file`; ConfigError{flag, "cannot write FILE"} on failure.
void write_kineto_file(const std::string& file, const sim::config::Json& trace, const std::string& flag);

}  // namespace trainsim::traces
