#pragma once
// Turns a resolved Job into a task DAG: per pipeline stage the schedule's F/B order expanded into
// per-layer compute tasks, TP collectives, pipeline sends, bucketed data-parallel gradient
// reduction overlapped with the last backward, and the optimizer step.
//
// The pieces: build_context (what the Job fixes: costs, labels, sizes), layer_tasks (one layer's
// forward / backward with TP overlap and context parallelism), moe_block, sharding (ZeRO-3
// gathers, gradient buckets, parameter gathers), pipeline (the walk over the schedule's ops),
// stage_emitter (tasks of one stage), communicators, stage_memory.

#include "models/collectives/comm_model.hpp"
#include "models/compute/compute_model.hpp"
#include "models/workload/dag/workload.hpp"
#include "models/workload/job/job.hpp"

namespace trainsim::models::workload {

Workload build_workload(const Job& job, const compute::ComputeModel& cm, const collectives::CommModel& comm,
                        Fidelity fidelity);

}  // namespace trainsim::models::workload
