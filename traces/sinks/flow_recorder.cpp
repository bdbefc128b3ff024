#include "traces/sinks/flow_recorder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "sim/error.hpp"

namespace trainsim::traces {

std::vector<std::string> link_labels(const topology::Topology& t) {
  std::vector<std::string> labels;
  labels.reserve(t.link_count());
  for (topology::LinkId l = 0; l < t.link_count(); ++l) {
    std::ostringstream label;
    label << t.node(t.link_src(l)).name << "->" << t.node(t.link_dst(l)).name << " " << t.link(l).kind;
    labels.push_back(label.str());
  }
  return labels;
}

FlowRecorder::FlowRecorder(sim::flow::FlowNetwork& net, std::vector<std::string> link_labels)
    : net_(net), labels_(std::move(link_labels)), load_(net.link_count()) {
  TRAINSIM_ASSERT(labels_.size() == net.link_count(), labels_.size(), " labels for ", net.link_count(), " links");
  auto& sig = net.signals();
  sig.on_flow_start.connect([this](sim::flow::FlowId id, sim::Bytes bytes, sim::Time t) {
    Live f;
    f.span = static_cast<uint32_t>(spans_.size());
    net_.route_of(id, f.links, f.usage);
    FlowSpan s;
    s.start_ns = t.count_ns();
    s.bytes = bytes.count();
    s.links = static_cast<uint32_t>(f.links.size());
    if (!f.links.empty()) {
      s.first_link = f.links.front();
      s.last_link = f.links.back();
    }
    spans_.push_back(s);
    live_[id] = std::move(f);
  });
  sig.on_flow_rate_change.connect([this](sim::flow::FlowId id, sim::Bandwidth rate, sim::Time t) {
    if (const auto it = live_.find(id); it != live_.end()) change(it->second, rate.bytes_per_second(), t);
  });
  sig.on_flow_end.connect([this](sim::flow::FlowId id, sim::Time t) {
    const auto it = live_.find(id);
    if (it == live_.end()) return;
    change(it->second, 0.0, t);
    spans_[it->second.span].end_ns = t.count_ns();
    live_.erase(it);
  });
}

void FlowRecorder::change(Live& f, double rate, sim::Time t) {
  if (rate == f.rate) return;
  for (size_t k = 0; k < f.links.size(); ++k) {
    auto& l = load_[f.links[k]];
    const double delta = (rate - f.rate) * f.usage[k];
    if (!l.empty() && l.back().first == t.count_ns())
      l.back().second += delta;
    else
      l.emplace_back(t.count_ns(), delta);
  }
  f.rate = rate;
}

std::vector<double> FlowRecorder::link_bin_bytes(size_t link, sim::Time end, int32_t bins) const {
  TRAINSIM_ASSERT(bins >= 1, "bins must be >= 1");
  const double span = static_cast<double>(std::max<int64_t>(end.count_ns(), 1));
  const double width = span / bins;
  std::vector<double> bytes(static_cast<size_t>(bins), 0.0);
  double rate = 0;  // bytes/s since `at`
  int64_t at = 0;
  // Integrates the piecewise-constant load into the bins it spans.
  const auto add = [&](int64_t from, int64_t to) {
    if (rate == 0 || to <= from) return;
    for (auto b = static_cast<int64_t>(static_cast<double>(from) / width); b < bins; ++b) {
      const double lo = std::max(static_cast<double>(from), static_cast<double>(b) * width);
      const double hi = std::min(static_cast<double>(to), static_cast<double>(b + 1) * width);
      if (hi <= lo) break;
      bytes[static_cast<size_t>(b)] += rate * (hi - lo) / 1e9;
    }
  };
  for (const auto& [t, delta] : load_[link]) {
    add(at, t);
    at = t;
    rate += delta;
    if (std::abs(rate) < 1e-6) rate = 0;
  }
  add(at, end.count_ns());
  return bytes;
}

void FlowRecorder::write_link_csv(std::ostream& os, sim::Time end, int32_t bins) const {
  TRAINSIM_ASSERT(bins >= 1, "bins must be >= 1");
  os << "link,label,capacity_GBps,bin_start_s,bin_end_s,bytes,utilization\n";
  const double span = static_cast<double>(std::max<int64_t>(end.count_ns(), 1));
  const double width = span / bins;
  char line[160];
  for (size_t l = 0; l < load_.size(); ++l) {
    if (load_[l].empty()) continue;
    const std::vector<double> bytes = link_bin_bytes(l, end, bins);
    const double cap = net_.capacity(static_cast<sim::flow::LinkId>(l)).bytes_per_second();
    for (int32_t b = 0; b < bins; ++b) {
      if (bytes[static_cast<size_t>(b)] < 0.5) continue;
      const double t0 = b * width / 1e9, t1 = (b + 1) * width / 1e9;
      os << l << ',' << labels_[l] << ',';
      std::snprintf(line, sizeof line, "%.3f,%.9f,%.9f,%.0f,%.4f\n", cap / 1e9, t0, t1, bytes[static_cast<size_t>(b)],
                    cap > 0 ? bytes[static_cast<size_t>(b)] / (cap * (t1 - t0)) : 0.0);
      os << line;
    }
  }
}

void FlowRecorder::write_link_csv(const std::string& file, sim::Time end, int32_t bins, const std::string& path) const {
  std::ofstream f(file);
  if (!f) throw ConfigError(path, "cannot write " + file, "check that the directory exists and is writable");
  write_link_csv(f, end, bins);
}

}  // namespace trainsim::traces
