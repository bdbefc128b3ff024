#pragma once
// A job's MoE options, `moe_dispatcher` and `moe_balance` (models/llm/moe_dispatch.hpp): their
// schema fields, what the job passes to the MoE cost model, and their part of the report's config.

#include <cstdint>

#include "models/llm/moe_dispatch.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::models::workload {

struct JobSpec;
struct Job;

// Adds moe_dispatcher and moe_balance to the job schema (their defaults are Megatron-Core's
// recipes'; a stack's `defaults` may set others).
void moe_fields(sim::config::Schema<JobSpec>& s);

// EP ranks of one EP group inside a node (parallel folding, expert_layout.hpp: EP ranks stride
// etp, so min(ep, gpus_per_node / etp) of them share a node; 1 once etp fills a node).
int64_t ep_ranks_per_node(const Job& j);

// How the job runs its MoE layers (dispatcher, balancing, EP ranks per node).
llm::MoeRun moe_run(const Job& j);

// Whether the MoE dispatcher synchronizes with the host every layer (llm/host_sync.hpp): the
// stack's dropless dispatcher does, unless the experts are padded to capacity (static shapes,
// Megatron-Core token_dispatcher.py drop_and_pad: cuda_sync_point "no_sync").
bool moe_dispatch_syncs(const Job& j);

// Adds "moe_dispatcher" and "moe_balance" to a report's config object (MoE models only).
void add_moe_json(const Job& j, sim::config::Json& out);

}  // namespace trainsim::models::workload
