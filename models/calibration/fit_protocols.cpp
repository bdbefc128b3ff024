#include "models/calibration/fit_protocols.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "models/calibration/fit_detail.hpp"
#include "models/collectives/nccl_tuning.hpp"

namespace trainsim::models::calibration {

namespace col = models::collectives;
using detail::rel_rms;

namespace {

hardware::ProtocolScale& scale_for(hardware::NcclCalibration& c, const std::string& p) {
  return p == "ll" ? c.ll : p == "ll128" ? c.ll128 : c.simple;
}

}  // namespace

void fit_protocol_scales(const std::vector<Measurement>& items, FitResult& r) {
  if (!r.has_cluster) return;
  const hardware::ClusterSpec prior = r.cluster;
  hardware::ClusterSpec raw = prior;  // NCCL's own table: every scale 1
  raw.nccl = hardware::NcclCalibration{};
  raw.nccl.architecture = prior.nccl.architecture;
  std::map<std::string, std::vector<const Measurement*>> by_protocol;
  for (const Measurement& m : items)
    if (m.kind == OpKind::kCollective && !m.protocol.empty() && m.ranks > 1 && m.measured_s > 0.0 &&
        (m.op == "all_reduce" || m.op == "all_gather" || m.op == "reduce_scatter"))
      by_protocol[m.protocol].push_back(&m);
  for (const auto& [name, rows] : by_protocol) {
    const col::Protocol protocol = col::parse_protocol(name, "protocol");
    // Columns: NCCL's latency (s) and bytes / bandwidth (s) of the ring entry; target t - launch.
    std::vector<double> lat, sec, y, t;
    std::set<int64_t> sizes;
    for (const Measurement* m : rows) {
      const int64_t per_node = m->link_class == "nvlink" ? m->ranks : std::min<int64_t>(m->ranks, prior.domain_gpus());
      const col::NcclSystem s = col::nccl_system(raw, m->ranks, per_node, false);
      const auto op = col::parse_collective_op(m->op, "op");
      const col::NcclEntry e = col::nccl_entry(op, col::NcclAlgorithm::kRing, protocol, s);
      if (e.bandwidth_GBps <= 0.0) continue;
      lat.push_back(e.latency_us * 1e-6);
      sec.push_back(static_cast<double>(m->bytes) / (e.bandwidth_GBps * 1e9));
      y.push_back(m->measured_s - prior.collective_launch.seconds());
      t.push_back(m->measured_s);
      sizes.insert(m->bytes);
    }
    ParameterFit pl, pb;
    pl.name = "nccl." + name + ".latency";
    pb.name = "nccl." + name + ".bandwidth";
    pl.target = pb.target = "cluster";
    pl.prior = scale_for(r.cluster.nccl, name).latency;
    pb.prior = scale_for(r.cluster.nccl, name).bandwidth;
    pl.fitted = pl.prior;
    pb.fitted = pb.prior;
    pl.records = pb.records = static_cast<int>(y.size());
    pl.kinds = pb.kinds = "collective(" + name + ")";
    if (sizes.size() < 2) {
      pl.note = pb.note = "kept: fewer than 2 sizes";
    } else {
      // Normal equations of the two-column least squares, weighted by 1 / t (relative error).
      double aa = 0, ab = 0, bb = 0, ay = 0, by = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        const double w = 1.0 / (t[i] * t[i]);
        aa += w * lat[i] * lat[i];
        ab += w * lat[i] * sec[i];
        bb += w * sec[i] * sec[i];
        ay += w * lat[i] * y[i];
        by += w * sec[i] * y[i];
      }
      const double det = aa * bb - ab * ab;
      const double a = det != 0.0 ? (ay * bb - by * ab) / det : 0.0, b = det != 0.0 ? (aa * by - ab * ay) / det : 0.0;
      if (a <= 0.0 || b <= 0.0) {
        pl.note = pb.note = "kept: the fit is not positive (sizes too close together)";
      } else {
        pl.fitted = std::clamp(a, 0.05, 20.0);
        pb.fitted = std::clamp(1.0 / b, 0.01, 4.0);
        pl.kept = pb.kept = false;
        std::vector<double> before, after;
        for (size_t i = 0; i < y.size(); ++i) {
          const double launch = prior.collective_launch.seconds();
          before.push_back(launch + pl.prior * lat[i] + sec[i] / pb.prior);
          after.push_back(launch + pl.fitted * lat[i] + sec[i] / pb.fitted);
        }
        pl.rms_before = pb.rms_before = rel_rms(before, t);
        pl.rms_after = pb.rms_after = rel_rms(after, t);
        scale_for(r.cluster.nccl, name) = hardware::ProtocolScale{pl.fitted, pb.fitted};
      }
    }
    r.parameters.push_back(pl);
    r.parameters.push_back(pb);
  }
}

}  // namespace trainsim::models::calibration
