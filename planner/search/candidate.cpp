#include "planner/search/candidate.hpp"

#include "models/schedules/schedule.hpp"

namespace trainsim::planner::search {

const std::string& schedule_name(const Candidate& c) {
  return models::schedules::ScheduleRegistry::instance().all()[c.schedule].name;
}

std::string describe(const Candidate& c) {
  std::string s = "tp" + std::to_string(c.tp) + " pp" + std::to_string(c.pp) + " dp" + std::to_string(c.dp);
  if (c.cp > 1) s += " cp" + std::to_string(c.cp);
  if (c.cp > 1 && c.cp_algo) s += std::string(" ") + to_string(static_cast<models::workload::CpAlgo>(c.cp_algo - 1));
  if (c.ep > 1) s += " ep" + std::to_string(c.ep);
  if (c.etp != c.tp && c.ep > 1) s += " etp" + std::to_string(c.etp);
  if (c.ep > 1 && c.moe_dispatcher)
    s += std::string(" ") + models::workload::to_string(static_cast<models::llm::MoeDispatcher>(c.moe_dispatcher - 1));
  if (c.vp > 1) s += " vp" + std::to_string(c.vp);
  s += " mb" + std::to_string(c.micro_batch);
  if (c.zero > 0) s += " zero" + std::to_string(c.zero);
  if (c.recompute != Recompute::kNone) s += c.recompute == Recompute::kSelective ? " sel" : " full";
  if (c.tp > 1 && !c.sp) s += " no-sp";
  if (c.uneven) s += " uneven";
  s += " " + schedule_name(c);
  return s;
}

}  // namespace trainsim::planner::search
