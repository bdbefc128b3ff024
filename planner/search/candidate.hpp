#pragma once
// One point of the planner's search space: the parallel configuration of a job over a fixed
// model, cluster, GPU count and batch. Small and trivially copyable: the search holds hundreds of
// thousands of them and ships them between threads and MPI ranks as bytes.

#include <cstdint>
#include <string>
#include <tuple>

#include "models/workload/job/options.hpp"

namespace trainsim::planner::search {

using models::workload::Recompute;  // to_string(Recompute) is in the job folder

struct Candidate {
  int32_t tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, etp = 1, vp = 1;
  int32_t micro_batch = 1;
  int32_t zero = 0;
  Recompute recompute = Recompute::kNone;
  uint8_t schedule = 0;  // index into ScheduleRegistry::all()
  bool sp = false;
  // pp*vp does not divide the layers: the first and last virtual stages take fewer layers (they
  // also hold the embedding and the LM head), every other one ceil(layers / (pp*vp)).
  bool uneven = false;
  // The context-parallel algorithm when the job's stack does not run the job's: CpAlgo + 1; 0
  // keeps the job's (stack_space.hpp).
  uint8_t cp_algo = 0;
  // The MoE token dispatcher when the planner searches it (ep > 1): MoeDispatcher + 1; 0 keeps the
  // job's (stack_space.hpp).
  uint8_t moe_dispatcher = 0;

  // A total order used to break ties, so that every run ranks equal estimates the same way.
  auto key() const {
    return std::make_tuple(tp, pp, dp, cp, ep, etp, vp, micro_batch, zero, static_cast<int>(recompute),
                           static_cast<int>(schedule), sp, uneven, static_cast<int>(cp_algo),
                           static_cast<int>(moe_dispatcher));
  }
  friend bool operator==(const Candidate& a, const Candidate& b) { return a.key() == b.key(); }
  friend bool operator<(const Candidate& a, const Candidate& b) { return a.key() < b.key(); }
};

// Schedule name of a candidate.
const std::string& schedule_name(const Candidate& c);

// "tp8 pp4 dp32 vp2 mb1 zero1 sel interleaved" (cp/ep/etp/sp shown when they matter).
std::string describe(const Candidate& c);

}  // namespace trainsim::planner::search
