#pragma once
// MoE parallel folding (Megatron-Core >= 0.10, "MoE Parallel Folding", arXiv:2504.14960): the expert
// layers map the same GPUs of a pipeline stage onto their own grid, expert-TP x EP x expert-DP,
// independent of the attention layers' TP x CP x DP. Both grids number the stage's ranks the same
// way, innermost first:
//   attention  l = t + tp * (c + cp * d)            (Megatron's "tp-cp-ep-dp-pp" order, ep = 1)
//   experts    l = et + etp * (e + ep * ed)         (the expert RankGenerator's "tp-ep-dp-pp")
// so an EP group is `ep` ranks `etp` apart and may take in TP and CP peers: EP can exceed DP
// (Qwen3-235B at TP 4, DP 8, EP 32 is legal), and only etp * ep must divide tp * cp * dp.
// The workload builder's communicators, the planner's estimator and the emitters all read the
// groups from here, so they agree on which ranks talk.

#include <cstdint>

#include "models/collectives/comm_model.hpp"

namespace trainsim::models::workload {

struct ExpertLayout {
  int64_t tp = 1, cp = 1, dp = 1;  // attention grid of one stage
  int64_t ep = 1, etp = 1;         // expert grid: etp x ep x edp() over the same ranks
  int64_t gpus_per_node = 8;

  int64_t stage_ranks() const { return tp * cp * dp; }
  // Expert data-parallel ranks: those holding the same expert slice.
  int64_t edp() const { return stage_ranks() / (ep * etp); }

  // Stage-local index of the attention coordinates, and back.
  int64_t local(int64_t t, int64_t c, int64_t d) const { return t + tp * (c + cp * d); }
  struct Attention {
    int64_t t, c, d;
  };
  Attention attention(int64_t l) const { return {l % tp, (l / tp) % cp, l / (tp * cp)}; }

  struct Expert {
    int64_t et, e, ed;
  };
  Expert expert(int64_t l) const { return {l % etp, (l / etp) % ep, l / (etp * ep)}; }
  int64_t local(const Expert& x) const { return x.et + etp * (x.e + ep * x.ed); }

  // Placement of each expert communicator (the same for every rank when gpus_per_node divides the
  // stage or the stage divides it): ETP groups are contiguous, EP groups stride etp, expert-DP
  // groups stride etp * ep.
  collectives::GroupPlacement etp_group() const { return strided(etp, 1); }
  collectives::GroupPlacement ep_group() const { return strided(ep, etp); }
  collectives::GroupPlacement edp_group() const { return strided(edp(), etp * ep); }

 private:
  collectives::GroupPlacement strided(int64_t size, int64_t stride) const;
};

struct Job;
ExpertLayout expert_layout(const Job& job);

}  // namespace trainsim::models::workload
