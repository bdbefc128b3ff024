#include "planner/search/space.hpp"

#include <algorithm>
#include <numeric>

#include "models/schedules/schedule.hpp"
#include "planner/search/stack_space.hpp"
#include "sim/error.hpp"

namespace trainsim::planner::search {

using models::workload::Job;
using models::workload::JobSpec;
using sim::config::Json;

namespace {

std::vector<int64_t> divisors(int64_t n, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= std::min(n, limit); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

uint8_t schedule_index(const std::string& name) {
  const auto& all = models::schedules::ScheduleRegistry::instance().all();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].name == name) return static_cast<uint8_t>(i);
  models::schedules::ScheduleRegistry::instance().get(name, "schedule");  // throws with the valid names
  return 0;
}

}  // namespace

SearchSpace make_space(const JobSpec& spec, const Json& given, const Job& hw, const SpaceOptions& o) {
  if (given.contains("pp_layout"))
    throw ConfigError("pp_layout", "the planner chooses the layer split itself",
                      "drop --pp-layout (plan searches even splits and lighter first/last stages)");
  const auto& m = hw.model;
  SearchSpace s;
  auto pinned = [&](const char* key) { return given.contains(key) && !given.at(key).is_null(); };
  // tp divides the heads, the KV heads and the MLP width (their common divisors), not capped at a
  // node: beyond one NVLink domain (a DGX node, an NVL72 rack) only multiples of it (resolve_job's
  // rule, counted when it removes). TP, CP and EP groups inside a 72-GPU rack are searched and
  // priced on its NVLink.
  const int64_t tp_max = std::gcd(std::gcd(m.heads, m.kv_heads_or_heads()), m.ffn_hidden);
  s.tp = pinned("tp") ? std::vector<int64_t>{spec.tp} : divisors(tp_max, tp_max);
  const int64_t seq = spec.seq_len.value_or(m.seq_len);
  if (pinned("cp")) {
    s.cp = {spec.cp};
  } else {
    for (int64_t c = 1; c <= o.max_cp; c *= 2)
      if (c == 1 || seq / c >= o.min_cp_tokens) s.cp.push_back(c);
  }
  s.pp = pinned("pp") ? std::vector<int64_t>{spec.pp} : divisors(spec.gpus, m.layers);
  s.vp = pinned("vp") ? std::vector<int64_t>{spec.vp} : divisors(o.max_vp, o.max_vp);
  if (!pinned("vp")) {
    s.vp.clear();
    for (int64_t v = 1; v <= o.max_vp; ++v) s.vp.push_back(v);
  }
  if (pinned("micro_batch")) {
    s.micro_batch = {spec.micro_batch};
  } else {
    for (int64_t b = 1; b <= o.max_micro_batch; ++b) s.micro_batch.push_back(b);
  }
  if (pinned("zero")) {
    s.zero = {spec.zero};
  } else {
    s.zero = {0, 1, 2, 3};
  }
  if (pinned("recompute")) {
    s.recompute = {spec.recompute};
  } else if (spec.recompute_modules) {
    s.recompute = {Recompute::kSelective};  // the modules name selective recompute's work
  } else {
    s.recompute = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  }
  if (pinned("schedule")) {
    s.schedules = {schedule_index(spec.schedule)};
  } else {
    for (size_t i = 0; i < models::schedules::ScheduleRegistry::instance().all().size(); ++i)
      s.schedules.push_back(static_cast<uint8_t>(i));
  }
  s.sp = {pinned("sp") ? spec.sp : true};
  if (m.moe) {
    s.ep = pinned("ep") ? std::vector<int64_t>{spec.ep} : divisors(m.moe->experts, m.moe->experts);
    s.etp = pinned("etp") ? std::vector<int64_t>{*spec.etp} : std::vector<int64_t>{1, 0};
  } else {
    s.ep = {1};
    s.etp = {0};
  }
  if (pinned("dp")) {
    s.pinned_dp = true;
    s.dp = *spec.dp;
  }
  s.stack_excluded = restrict_to_stack(s, spec, given, hw);
  s.stack_rule = "stack " + hw.stack.name;
  return s;
}

namespace {
// (schedule, vp) pairs worth running with `pp` stages: one stage runs 1F1B without chunks; a
// schedule without chunks runs vp = 1; ZB-V its fixed 2; interleaved schedules 2..max_vp (or the
// pinned vp).
std::vector<std::pair<uint8_t, int64_t>> schedule_pairs(const SearchSpace& s, int64_t pp) {
  const auto& schedules = models::schedules::ScheduleRegistry::instance().all();
  std::vector<std::pair<uint8_t, int64_t>> out;
  for (const uint8_t si : s.schedules) {
    const auto& sched = schedules[si];
    for (const int64_t vp : s.vp) {
      bool ok = false;
      // One stage: the schedule does not matter, so only 1F1B unless the schedule is pinned.
      if (pp == 1 && s.schedules.size() > 1)
        ok = vp == 1 && sched.name == "1f1b";
      else if (sched.fixed_virtual_stages > 0)
        ok = vp == sched.fixed_virtual_stages;
      else if (sched.interleaved)
        ok = vp > 1 || s.vp.size() == 1;
      else
        ok = vp == 1;
      if (ok) out.emplace_back(si, vp);
    }
  }
  return out;
}
}  // namespace

Enumeration enumerate(const SearchSpace& s, const Job& hw, int64_t gpus, int64_t global_batch, int64_t seq) {
  Enumeration e;
  const auto& m = hw.model;
  const auto& schedules = models::schedules::ScheduleRegistry::instance().all();
  const int64_t gpn = hw.cluster.domain_gpus();
  // The rule's name says "node" where the domain is one node, as before multi-node NVLink.
  const std::string tp_rule = gpn == hw.cluster.gpus_per_node
                                  ? "tp beyond a node must be a multiple of gpus_per_node"
                                  : "tp beyond an NVLink domain must be a multiple of nvlink_domain";
  // Sizes of the loops inside each level, so that a rule failing at an outer level counts every
  // configuration it removes.
  const int64_t n_inner_mb = static_cast<int64_t>(s.zero.size() * s.recompute.size() * s.sp.size());
  const int64_t n_inner_vp = static_cast<int64_t>(s.micro_batch.size()) * n_inner_mb;
  std::map<int64_t, std::vector<std::pair<uint8_t, int64_t>>> pairs;
  for (const int64_t pp : s.pp) pairs[pp] = schedule_pairs(s, pp);
  // Expert-TP values: etp = 1 is the same as etp = tp when tp = 1.
  auto n_ep = [&](int64_t tp) {
    const bool dup = tp == 1 && s.etp.size() == 2 && s.etp[0] == 1 && s.etp[1] == 0;
    return static_cast<int64_t>(s.ep.size() * (dup ? 1 : s.etp.size()));
  };
  // (schedule, vp) pairs per pp; none (a pinned vp no pinned schedule runs) counts as one.
  auto n_pairs = [&](int64_t pp) { return std::max<int64_t>(1, static_cast<int64_t>(pairs[pp].size())); };
  auto n_inner_pp = [&](int64_t tp, int64_t pp) { return n_ep(tp) * n_pairs(pp) * n_inner_vp; };
  auto n_inner_cp = [&](int64_t tp) {
    int64_t n = 0;
    for (const int64_t pp : s.pp) n += n_inner_pp(tp, pp);
    return n;
  };
  auto n_inner_tp = [&](int64_t tp) { return static_cast<int64_t>(s.cp.size()) * n_inner_cp(tp); };
  auto reject = [&](const std::string& rule, int64_t n) {
    if (n <= 0) return;
    e.rejected[rule] += n;
    e.considered += n;
  };
  for (const int64_t tp : s.tp) {
    if (m.heads % tp || m.kv_heads_or_heads() % tp || m.ffn_hidden % tp) {
      reject("tp must divide heads, kv_heads and ffn_hidden", n_inner_tp(tp));
      continue;
    }
    if (tp > gpn && tp % gpn) {
      reject(tp_rule, n_inner_tp(tp));
      continue;
    }
    for (const int64_t cp : s.cp) {
      if (cp > 1 && (seq % (2 * cp) || hw.attention != models::workload::Attention::kFlash)) {
        reject("cp needs 2*cp to divide seq_len and flash attention", n_inner_cp(tp));
        continue;
      }
      for (const int64_t pp : s.pp) {
        if (gpus % (tp * cp * pp)) {
          reject("gpus must be a multiple of tp*cp*pp", n_inner_pp(tp, pp));
          continue;
        }
        const int64_t dp = gpus / (tp * cp * pp);
        if (s.pinned_dp && dp != s.dp) {
          reject("dp is pinned", n_inner_pp(tp, pp));
          continue;
        }
        if (pairs[pp].empty()) {
          reject("schedule and vp do not match", n_inner_pp(tp, pp));
          continue;
        }
        const int64_t n_inner_ep = n_pairs(pp) * n_inner_vp;
        for (const int64_t ep : s.ep) {
          for (const int64_t etp_raw : s.etp) {
            const int64_t etp = etp_raw == 0 ? tp : etp_raw;
            if (etp_raw == 1 && tp == 1 && s.etp.size() > 1) continue;  // the same as etp = tp
            // Parallel folding: the expert grid etp x ep x expert-dp covers the stage's ranks.
            if (m.moe && ((tp * cp * dp) % (ep * etp) || m.moe->experts % ep)) {
              reject("ep*etp must divide tp*cp*dp, and ep the experts", n_inner_ep);
              continue;
            }
            if (m.moe && m.moe->expert_ffn_hidden % etp) {
              reject("etp must divide expert_ffn_hidden", n_inner_ep);
              continue;
            }
            if (m.moe && !s.folding && (dp % ep || tp % etp)) {
              reject(s.stack_rule + " cannot fold experts (ep must divide dp, etp divide tp)", n_inner_ep);
              continue;
            }
            for (const auto& [si, vp] : pairs[pp]) {
              const auto& sched = schedules[si];
              const int64_t vstages = pp * vp;
              bool uneven = false;
              int64_t chunk_layers = m.layers / vstages;  // the largest chunk's layers
              if (m.layers % vstages) {
                const std::vector<int64_t> layout = uneven_layout(m.layers, vstages);
                if (layout.empty()) {
                  reject("layers cannot be split over pp*vp", n_inner_vp);
                  continue;
                }
                if (!s.uneven) {
                  reject(s.stack_rule + " cannot run uneven pipeline stages", n_inner_vp);
                  continue;
                }
                uneven = true;
                chunk_layers = *std::max_element(layout.begin(), layout.end());
              }
              for (const int64_t mb : s.micro_batch) {
                if (global_batch % (dp * mb)) {
                  reject("global_batch must be a multiple of dp*micro_batch", n_inner_mb);
                  continue;
                }
                const int64_t mbs = global_batch / (dp * mb);
                if (sched.microbatches_multiple_of_stages && pp > 1 && mbs % pp) {
                  reject("interleaving needs micro-batches to be a multiple of pp", n_inner_mb);
                  continue;
                }
                for (const int64_t zero : s.zero) {
                  const int64_t n_inner_zero = n_inner_mb / static_cast<int64_t>(s.zero.size());
                  // ZeRO needs ranks to shard over: data-parallel ones, or for MoE experts the
                  // ranks holding the same experts (tp / etp of them when etp < tp).
                  const int64_t shard_ranks = m.moe ? std::max(dp * cp, dp * cp * tp / (ep * etp)) : dp * cp;
                  if (zero > 0 && shard_ranks == 1) {
                    reject("zero needs data-parallel ranks", n_inner_zero);
                    continue;
                  }
                  if (zero > 0 && s.dp_shard > 0 && dp * cp != s.dp_shard) {
                    reject(s.stack_rule + " cannot run hybrid sharding (dp_shard < dp*cp)", n_inner_zero);
                    continue;
                  }
                  for (const Recompute rc : s.recompute)
                    for (const bool sp : s.sp) {
                      if (rc == Recompute::kFull && s.recompute_layers >= 0 && s.recompute_layers < chunk_layers) {
                        reject(s.stack_rule + " cannot run partial full recompute (recompute_layers)", 1);
                        continue;
                      }
                      if (m.moe && tp > 1 && !sp) {
                        reject("MoE with tp > 1 needs sp", 1);
                        continue;
                      }
                      // With fused attention nothing is left for selective recompute to drop: it
                      // is the same plan as none (same memory, same time).
                      if (rc == Recompute::kSelective && hw.attention == models::workload::Attention::kFlash &&
                          s.recompute.size() > 1) {
                        reject("selective recompute is a no-op with flash attention", 1);
                        continue;
                      }
                      Candidate c;
                      c.tp = static_cast<int32_t>(tp);
                      c.pp = static_cast<int32_t>(pp);
                      c.dp = static_cast<int32_t>(dp);
                      c.cp = static_cast<int32_t>(cp);
                      c.ep = static_cast<int32_t>(ep);
                      c.etp = static_cast<int32_t>(etp);
                      c.vp = static_cast<int32_t>(vp);
                      c.micro_batch = static_cast<int32_t>(mb);
                      c.zero = static_cast<int32_t>(zero);
                      c.recompute = rc;
                      c.schedule = si;
                      c.sp = sp && tp > 1;
                      c.uneven = uneven;
                      c.cp_algo = s.cp_algo;
                      e.candidates.push_back(c);
                      ++e.considered;
                    }
                }
              }
            }
          }
        }
      }
    }
  }
  return e;
}

void apply(const Candidate& c, const Job& hw, JobSpec& spec) {
  spec.tp = c.tp;
  spec.pp = c.pp;
  spec.dp = c.dp;
  spec.cp = c.cp;
  spec.ep = c.ep;
  spec.etp = c.etp;
  spec.vp = c.vp;
  spec.micro_batch = c.micro_batch;
  spec.zero = c.zero;
  spec.recompute = c.recompute;
  spec.schedule = schedule_name(c);
  spec.sp = c.sp;
  if (c.cp_algo) spec.cp_algo = static_cast<models::workload::CpAlgo>(c.cp_algo - 1);
  if (c.moe_dispatcher) spec.moe_dispatcher = static_cast<models::llm::MoeDispatcher>(c.moe_dispatcher - 1);
  spec.pp_layout =
      c.uneven ? uneven_layout(hw.model.layers, static_cast<int64_t>(c.pp) * c.vp) : std::vector<int64_t>{};
}

}  // namespace trainsim::planner::search
