#pragma once
// A job's software stack (models/stack): the recipe defaults it fills into a job, its kernels
// applied to the GPU, and the check that the job asks only for what the stack can run.

#include "models/hardware/calibration.hpp"
#include "models/hardware/gpu_spec.hpp"
#include "models/stack/stack_spec.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::models::workload {

struct Job;

// `j` with the stack's `defaults` added for the keys it leaves out (the stack is `j["stack"]`, or
// the default stack). Unknown stacks and malformed stack files throw ConfigError at "stack".
sim::config::Json with_stack_defaults(const sim::config::Json& j);

// The stack a job names (preset name, file or object), parsed and checked.
stack::StackSpec resolve_stack(const sim::config::Json& ref);

// A calibration's constants for this stack (its `stack_overrides` under the stack's name), set
// over the stack with the calibration named as their source. Other stacks' entries are ignored.
void apply_calibration_stack(const hardware::Calibration& c, stack::StackSpec& s);

// The stack's kernels on this GPU: FlashAttention-2-class stacks run slower attention on GPUs
// with Hopper tensor cores (wgmma) than the GPU preset's reference kernel.
void apply_stack_kernels(const stack::StackSpec& s, hardware::GpuSpec& gpu);
// Its inverse: `gpu` (a resolved job's) as the preset and calibration gave it, before the
// stack's kernel scales; what a calibration's GPU overrides replace.
hardware::GpuSpec without_stack_kernels(const stack::StackSpec& s, hardware::GpuSpec gpu);

// Throws ConfigError naming the stack and the feature when the job uses one the stack cannot run.
void check_stack_features(const Job& j);
// The schedule alone, checked before the schedule's own shape rules (its vp, its micro-batches).
void check_stack_schedule(const Job& j);

// The stacks (built-in presets) that can run `feature` (a predicate on their features), for hints.
std::string stacks_with(bool (*has)(const stack::StackFeatures&, const Job&), const Job& j);

}  // namespace trainsim::models::workload
