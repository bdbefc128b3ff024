#pragma once
// The caching allocator's reserve, fitted to the peak memory logged runs report
// (`measured.peak_memory_gib`): the memory part of `trainsim calibrate` (run_fit.hpp).
//
// A stage's device memory as simulated is
//   total(f) = fixed + f * reservable,   fixed = allocated tensors + framework (context, NCCL),
//                                         reservable = activations + transient buffers,
// with f the stack's `memory.allocator_fragmentation` (models/memory/footprint.hpp: what the
// caching allocator holds beyond the tensors alive at the peak). A run's peak is the largest
// stage total, so the reserve that reproduces a run's measured peak M is
//   f_i = min over stages with reservable > 0 of (M - fixed) / reservable
// (the first stage to reach M), clamped to the schema's [0, 1]. Per stack, with at least two runs
// logging their peak: f = the median of the f_i (robust to one odd run), and the leave-one-out
// error of each run is its peak predicted at the median of the others' f_i. Every run of the stack
// ran, logged peak or not, so f is capped where one of them would stop fitting its capacity.
// M is compared with the simulated device total, framework memory included (as the accuracy
// suites compare it); PyTorch's max_memory_reserved leaves the CUDA context and NCCL's buffers
// (~1 GiB) out, so a reserve fitted to it comes out a few points low. The fit is kept when
// that cross-validated median error is below the presets'; else the stack keeps its reserve and
// the report says why (the runs differ from the memory model by more than one constant).

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/schema.hpp"

namespace trainsim::models::calibration {

struct StagePeak {
  double fixed_gib = 0, reservable_gib = 0;
};

// One run that logged its peak memory, as simulated at the presets.
struct MemoryRun {
  std::string stack;
  double measured_gib = 0;  // 0: the run logged no peak (it still bounds the reserve through capacity)
  double capacity_gib = 0;  // usable device memory (0: not checked)
  double prior = 0;         // the stack's allocator_fragmentation the run was simulated with
  std::vector<StagePeak> stages;
};

// The peak memory of `stages` at reserve f.
double peak_gib(const std::vector<StagePeak>& stages, double f);

struct MemoryFit {
  std::string stack;
  double prior = 0, value = 0;  // value == prior when not kept
  bool fitted = false;
  std::string note;          // why kept, or that it was capped
  int64_t capped_by = -1;    // the run whose capacity capped the reserve (-1: not capped)
  std::vector<size_t> runs;  // indices into fit_memory's input
  std::vector<double> error_before, error_after, error_cv;  // relative peak-memory errors, per run of `runs`
  double median_before = 0, median_after = 0, median_cv = 0;
};

// One fit per stack among the runs that log a peak (measured_gib > 0), in order of the stacks' names.
std::vector<MemoryFit> fit_memory(const std::vector<MemoryRun>& runs);

// The kept reserves into `calibration`'s stack_overrides (memory.allocator_fragmentation) with a
// source each, and every fit with its runs' errors (`run_ids`, by run index) under fit.memory.
void write_memory_fit(sim::config::Json& calibration, const std::vector<MemoryFit>& fits,
                      const std::vector<std::string>& run_ids);

}  // namespace trainsim::models::calibration
