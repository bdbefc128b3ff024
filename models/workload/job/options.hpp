#pragma once
// The closed-set options of a job (`network`, `attention`, `recompute`, `cp_algo`, `precision`,
// `moe_dispatcher`, `moe_balance`):
// parsed once by the job schema into enums, spelled in JSON, reports and messages by their names
// below (in enum order); the defaults are the job schema's.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/schema.hpp"

namespace trainsim::models::compute {
enum class Precision : uint8_t;  // compute_model.hpp
}  // namespace trainsim::models::compute
namespace trainsim::models::llm {
enum class MoeDispatcher : uint8_t;  // moe_dispatch.hpp
enum class MoeBalance : uint8_t;
}  // namespace trainsim::models::llm

namespace trainsim::models::workload {

// How communication is simulated: flows on the topology, or the alpha-beta formulas.
enum class Network : uint8_t { kFlow, kAnalytic };
// Attention kernel: fused FlashAttention, or unfused batched GEMMs + softmax.
enum class Attention : uint8_t { kFlash, kUnfused };
// Activation recomputation: none, the attention core (Korthikanti et al.), or whole layers.
enum class Recompute : uint8_t { kNone, kSelective, kFull };
// Context parallelism: ring attention, Ulysses all-to-all, or Ulysses groups x ring.
enum class CpAlgo : uint8_t { kRing, kUlysses, kHybrid };
// Adam's moments in fp32, or in bf16 (Megatron-Core's precision-aware optimizer, Apex
// DistributedFusedAdam dtype=bf16); the fp32 master weights stay.
enum class OptimizerStates : uint8_t { kFp32, kBf16 };

// The names of an option's values, in enum order.
template <typename E>
struct OptionNames;
template <>
struct OptionNames<Network> {
  static constexpr std::array<const char*, 2> kNames{"flow", "analytic"};
};
template <>
struct OptionNames<Attention> {
  static constexpr std::array<const char*, 2> kNames{"flash", "unfused"};
};
template <>
struct OptionNames<Recompute> {
  static constexpr std::array<const char*, 3> kNames{"none", "selective", "full"};
};
template <>
struct OptionNames<CpAlgo> {
  static constexpr std::array<const char*, 3> kNames{"ring", "ulysses", "hybrid"};
};
template <>
struct OptionNames<OptimizerStates> {
  static constexpr std::array<const char*, 2> kNames{"fp32", "bf16"};
};
template <>
struct OptionNames<llm::MoeDispatcher> {
  static constexpr std::array<const char*, 3> kNames{"alltoall", "allgather", "flex"};
};
template <>
struct OptionNames<llm::MoeBalance> {
  static constexpr std::array<const char*, 2> kNames{"aux_loss", "aux_free"};
};
template <>
struct OptionNames<compute::Precision> {
  static constexpr std::array<const char*, 5> kNames{"bf16", "fp16", "fp8", "mxfp8", "nvfp4"};
};

template <typename E>
concept JobOption = requires {
  OptionNames<E>::kNames;
};

template <JobOption E>
constexpr const char* option_name(E e) {
  return OptionNames<E>::kNames[static_cast<size_t>(e)];
}

template <JobOption E>
std::vector<std::string> option_names() {
  return {OptionNames<E>::kNames.begin(), OptionNames<E>::kNames.end()};
}

// Reads a name of E (a JSON string); throws ConfigError at `path` as sim::config::read_enum does.
template <JobOption E>
E read_option(const sim::config::Json& j, const std::string& path) {
  const std::string v = sim::config::read_enum(j, path, option_names<E>());
  size_t i = 0;
  while (OptionNames<E>::kNames[i] != v) ++i;
  return static_cast<E>(i);
}

inline const char* to_string(Network v) { return option_name(v); }
inline const char* to_string(Attention v) { return option_name(v); }
inline const char* to_string(Recompute v) { return option_name(v); }
inline const char* to_string(CpAlgo v) { return option_name(v); }
inline const char* to_string(OptimizerStates v) { return option_name(v); }
inline const char* to_string(llm::MoeDispatcher v) { return option_name(v); }
inline const char* to_string(llm::MoeBalance v) { return option_name(v); }

// JSON as the name (nlohmann would otherwise write an enum as its number).
inline void to_json(sim::config::Json& j, Network v) { j = to_string(v); }
inline void to_json(sim::config::Json& j, Attention v) { j = to_string(v); }
inline void to_json(sim::config::Json& j, Recompute v) { j = to_string(v); }
inline void to_json(sim::config::Json& j, CpAlgo v) { j = to_string(v); }
inline void to_json(sim::config::Json& j, OptimizerStates v) { j = to_string(v); }

}  // namespace trainsim::models::workload
