#include "models/workload/job/bf16_layers.hpp"

#include <algorithm>
#include <string>

#include "models/workload/job/job.hpp"
#include "sim/error.hpp"

namespace trainsim::models::workload {

void bf16_layer_fields(sim::config::Schema<JobSpec>& s) {
  s.integer("bf16_first_layers", &JobSpec::bf16_first_layers, 0, 1 << 20, 0,
            "With a quantized precision: the first N transformer layers run in BF16 (Megatron-Core "
            "--first-last-layers-bf16 --num-layers-at-start-in-bf16 N): their GEMMs, saved inputs and weights "
            "16-bit. 0: none.")
      .integer("bf16_last_layers", &JobSpec::bf16_last_layers, 0, 1 << 20, 0,
               "With a quantized precision: the last N transformer layers run in BF16 (Megatron-Core "
               "--num-layers-at-end-in-bf16 N). 0: none.");
}

void check_bf16_layers(const Job& j) {
  if (j.bf16_first_layers == 0 && j.bf16_last_layers == 0) return;
  const char* field = j.bf16_first_layers > 0 ? "bf16_first_layers" : "bf16_last_layers";
  if (!compute::quantized(j.precision))
    throw ConfigError(field,
                      std::string("keeps layers in BF16 out of a quantized precision; the job runs ") +
                          compute::to_string(j.precision),
                      "add --precision fp8, mxfp8 or nvfp4, or drop it");
  const int64_t both = j.bf16_first_layers + j.bf16_last_layers;
  if (both > j.model.layers)
    throw ConfigError(field, std::to_string(both) + " BF16 layers exceed the model's " + std::to_string(j.model.layers),
                      "keep at most " + std::to_string(j.model.layers) + " in all (or use --precision bf16)");
  // Megatron-Core's TransformerConfig (under fp8, so FP8 and MXFP8): at most a pipeline stage's
  // layers at each end (stack feature bf16_edge_layers_per_stage).
  const int64_t per_stage = j.model.layers / j.pp;
  if (j.stack.features.bf16_edge_layers_per_stage &&
      (j.precision == compute::Precision::kFp8 || j.precision == compute::Precision::kMxfp8) &&
      std::max(j.bf16_first_layers, j.bf16_last_layers) > per_stage)
    throw ConfigError(field,
                      "more BF16 layers at one end than a pipeline stage's " + std::to_string(per_stage) +
                          " (Megatron-Core's TransformerConfig refuses it under FP8)",
                      "use at most " + std::to_string(per_stage) + " at each end, or fewer pipeline stages");
  if (j.precision == compute::Precision::kFp8 && j.stack.kernels.fp8_recipe == "delayed")
    throw ConfigError(field,
                      "BF16 first/last layers with FP8 delayed scaling (stack \"" + j.stack.name +
                          "\"): Megatron-Core refuses them (\"Delayed scaling does not support first / last layer "
                          "in BF16\")",
                      "use a stack with current scaling (--stack megatron-core-2025), or drop it");
}

bool bf16_layer(const Job& j, int64_t layer) {
  return layer >= 0 && layer < j.model.layers &&
         (layer < j.bf16_first_layers || layer >= j.model.layers - j.bf16_last_layers);
}

double bf16_layer_share(const Job& j) {
  const int64_t bf16 = std::min(j.model.layers, j.bf16_first_layers + j.bf16_last_layers);
  return static_cast<double>(bf16) / static_cast<double>(std::max<int64_t>(j.model.layers, 1));
}

double gathered_param_bytes(const Job& j) { return j.fp8_param_gather ? 1.0 + bf16_layer_share(j) : 2.0; }

int64_t bf16_layers_in(const Job& j, int64_t first, int64_t count) {
  int64_t n = 0;
  for (int64_t l = first; l < first + count; ++l) n += bf16_layer(j, l) ? 1 : 0;
  return n;
}

}  // namespace trainsim::models::workload
