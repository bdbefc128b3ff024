// What one rank holds of a resolved job: its share of each layer's parameters (dense ones over TP,
// routed experts over ep x etp, MTP modules on the last stage) and the mapping of pipeline stages
// and model chunks to virtual stages and layers.
#include <numeric>

#include "models/schedules/schedule.hpp"
#include "models/workload/job/job.hpp"

namespace trainsim::models::workload {

int64_t Job::first_layer(int64_t vs) const { return std::accumulate(layers.begin(), layers.begin() + vs, int64_t{0}); }

double Job::expert_layer_params(int64_t layer) const {
  if (!model.moe) return 0.0;
  return model.layer_split(layer).experts / static_cast<double>(ep * etp);
}

double Job::rank_layer_params(int64_t layer) const {
  if (!model.moe && !model.mla && layer < model.layers) return model.layer_parameters() / static_cast<double>(tp);
  return model.layer_split(layer).non_expert_per_rank(tp) + expert_layer_params(layer);
}

double Job::rank_mtp_params() const {
  double p = 0.0;
  for (int64_t j = 0; j < model.mtp_layers; ++j)
    p += rank_layer_params(model.layers + j) + model.mtp_projection_parameters() / static_cast<double>(tp);
  return p;
}

double Job::expert_mtp_params() const {
  double p = 0.0;
  for (int64_t j = 0; j < model.mtp_layers; ++j) p += expert_layer_params(model.layers + j);
  return p;
}

int64_t Job::virtual_stage(int64_t stage, int64_t chunk) const {
  return schedules::virtual_stage(placement, static_cast<int>(pp), static_cast<int>(stage), static_cast<int>(chunk));
}

int64_t Job::stage_layers(int64_t stage) const {
  int64_t n = 0;
  for (int64_t c = 0; c < vp; ++c) n += layers[static_cast<size_t>(virtual_stage(stage, c))];
  return n;
}

}  // namespace trainsim::models::workload
