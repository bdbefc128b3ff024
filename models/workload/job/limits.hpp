#pragma once
// Limits on a resolved job's sizes that keep every count derived from them inside int64
// (docs/robustness.md): checked before anything is allocated or multiplied out.

#include "models/workload/job/job.hpp"

namespace trainsim::models::workload {

// Tokens per micro-batch (micro_batch x seq_len) at most 2^32 and per iteration (global_batch x
// seq_len) at most 2^44; throws ConfigError naming the field and the fix.
void check_token_counts(const Job& j);

}  // namespace trainsim::models::workload
