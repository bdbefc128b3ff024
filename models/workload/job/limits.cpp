#include "models/workload/job/limits.hpp"

#include <string>

#include "sim/error.hpp"

namespace trainsim::models::workload {

// Token counts bound every activation, message and FLOP count derived from them: products of
// user-given counts checked in double (exact here) before any int64 product is formed.
void check_token_counts(const Job& j) {
  constexpr double kMaxMicroBatchTokens = 4294967296.0;     // 2^32
  constexpr double kMaxIterationTokens = 17592186044416.0;  // 2^44
  const double seq = static_cast<double>(j.seq_len);
  if (static_cast<double>(j.micro_batch) * seq > kMaxMicroBatchTokens)
    throw ConfigError("micro_batch",
                      "micro_batch x seq_len = " + std::to_string(j.micro_batch) + " x " + std::to_string(j.seq_len) +
                          " tokens per micro-batch is above the 2^32 trainsim models",
                      "a smaller micro_batch or seq_len");
  if (static_cast<double>(j.global_batch) * seq > kMaxIterationTokens)
    throw ConfigError("global_batch",
                      "global_batch x seq_len = " + std::to_string(j.global_batch) + " x " + std::to_string(j.seq_len) +
                          " tokens per iteration is above the 2^44 trainsim models",
                      "a smaller global_batch or seq_len");
}

}  // namespace trainsim::models::workload
