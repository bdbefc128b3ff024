#pragma once
// A pipeline schedule is a pure generator: for each stage, the ordered list of forward (F),
// backward (B) and weight-gradient (W) ops with micro-batch and virtual-chunk ids. The workload
// builder turns it into tasks with cross-stage dependencies. Each schedule registers itself from
// its own file with TRAINSIM_REGISTER_SCHEDULE.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/registry.hpp"

namespace trainsim::models::schedules {

enum class OpType : uint8_t { kF, kB, kW };

struct Op {
  OpType type;
  int32_t microbatch;
  int32_t chunk;  // virtual stage index on this rank (0 when not interleaved)
  friend bool operator==(const Op&, const Op&) = default;
};

using StageOrders = std::vector<std::vector<Op>>;  // [stage][step]

// Where a rank's model chunks sit in the pipeline. kLoop (Megatron interleaving): chunk c of stage
// s is virtual stage c*p + s. kVShape (ZB-V, Qi et al. 2024): even chunks run down the stages,
// odd chunks back up, so chunk 1 of stage s is virtual stage 2p - 1 - s and the last stage's loss
// sits on stage 0.
enum class Placement : uint8_t { kLoop, kVShape };
// Virtual stage (position in the model, 0 = embedding side) of chunk `chunk` on stage `stage`.
int virtual_stage(Placement pl, int stages, int stage, int chunk);
// Inverse: the stage and the chunk that hold virtual stage `vs`.
int stage_of(Placement pl, int stages, int vs);
int chunk_of(Placement pl, int stages, int vs);

struct ScheduleParams {
  int virtual_stages = 1;  // model chunks per rank (interleaved schedules)
};

using ScheduleFn = std::function<StageOrders(int stages, int microbatches, const ScheduleParams&)>;

struct ScheduleInfo {
  static constexpr const char* kWhat = "pipeline schedule";  // in errors: unknown pipeline schedule "x"
  std::string name;
  std::string description;
  bool interleaved = false;  // uses virtual_stages > 1
  ScheduleFn generate;
  // Emits W ops: B is then the input gradient only, W the weight gradient of the same chunk and
  // micro-batch (zero-bubble schedules). Activations live until W.
  bool splits_weight_grad = false;
  Placement placement = Placement::kLoop;
  int fixed_virtual_stages = 0;  // > 0: the schedule needs exactly this vp (ZB-V: 2)
  // Needs the micro-batch count to be a multiple of the stage count (Megatron interleaving).
  bool microbatches_multiple_of_stages = false;
  // Consecutive ops of the same chunk keep its ZeRO-3 / FSDP weights gathered and accumulate its
  // gradients before reducing them (breadth-first: one gather and one reduction per chunk pass).
  bool reuses_gathered_weights = false;
};

// Immutable registry built at start-up from the self-registering files, sorted by name; get()
// throws ConfigError listing valid names when a name is unknown.
using ScheduleRegistry = sim::Registry<ScheduleInfo>;

// Validates the shape a schedule needs (microbatches vs stages, virtual stages); throws
// ConfigError naming the field.
void check_schedule_shape(const ScheduleInfo& s, int stages, int microbatches, int virtual_stages);

}  // namespace trainsim::models::schedules

#define TRAINSIM_REGISTER_SCHEDULE(id, name, interleaved, description, fn)                           \
  namespace {                                                                                        \
  const ::trainsim::models::schedules::ScheduleRegistry::Registrar trainsim_schedule_registrar_##id{ \
      ::trainsim::models::schedules::ScheduleInfo{name, description, interleaved, fn}};              \
  }

// Registers a fully described schedule: `info` is a ScheduleInfo expression.
#define TRAINSIM_REGISTER_SCHEDULE_INFO(id, info)                                                          \
  namespace {                                                                                              \
  const ::trainsim::models::schedules::ScheduleRegistry::Registrar trainsim_schedule_registrar_##id{info}; \
  }
