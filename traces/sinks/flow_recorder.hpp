#pragma once
// Records what the flow-level network does (conv. 7: it subscribes to FlowNetwork signals): every
// flow's lifetime, bytes and links, and every link's load over time. Writes a link-utilization
// CSV, and the flows as Chrome-trace events (ChromeTraceRecorder::set_flows).

#include <cstdint>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/flow/network.hpp"
#include "sim/units.hpp"
#include "topology/graph.hpp"

namespace trainsim::traces {

// "a->b kind" for each directed link of `t`: the labels FlowRecorder's outputs use.
std::vector<std::string> link_labels(const topology::Topology& t);

class FlowRecorder {
 public:
  // `link_labels[l]` names link l in outputs ("gpu3->nvswitch0 nvlink"); one per network link.
  FlowRecorder(sim::flow::FlowNetwork& net, std::vector<std::string> link_labels);
  FlowRecorder(const FlowRecorder&) = delete;
  FlowRecorder& operator=(const FlowRecorder&) = delete;

  struct FlowSpan {
    int64_t start_ns = 0, end_ns = -1;  // start(): latency phase begins; end: last byte arrived
    int64_t bytes = 0;
    uint32_t first_link = 0, last_link = 0, links = 0;
  };
  const std::vector<FlowSpan>& flows() const { return spans_; }
  const std::vector<std::string>& link_labels() const { return labels_; }

  // One row per (link, time bin) that carried traffic, links in id order, bins in time order:
  //   link,label,capacity_GBps,bin_start_s,bin_end_s,bytes,utilization
  // over [0, end) cut into `bins` equal bins; utilization = bytes / (capacity x bin width)
  // (copies of a shared flow count on the links they share). Throws ConfigError at `path` when
  // the file cannot be written.
  void write_link_csv(const std::string& file, sim::Time end, int32_t bins, const std::string& path) const;
  void write_link_csv(std::ostream& os, sim::Time end, int32_t bins) const;

  // Bytes link `link` carried in each of `bins` equal bins over [0, end) (the CSV's binning).
  std::vector<double> link_bin_bytes(size_t link, sim::Time end, int32_t bins) const;
  size_t link_count() const { return load_.size(); }
  bool link_used(size_t link) const { return !load_[link].empty(); }
  sim::Bandwidth link_capacity(size_t link) const { return net_.capacity(static_cast<sim::flow::LinkId>(link)); }

 private:
  struct Live {
    uint32_t span;
    double rate = 0;  // bytes/s
    std::vector<sim::flow::LinkId> links;
    std::vector<double> usage;
  };
  void change(Live& f, double rate, sim::Time t);

  sim::flow::FlowNetwork& net_;
  std::vector<std::string> labels_;
  std::vector<FlowSpan> spans_;
  std::unordered_map<sim::flow::FlowId, Live> live_;
  // Per link: (time ns, change of its load in bytes/s), in time order.
  std::vector<std::vector<std::pair<int64_t, double>>> load_;
};

}  // namespace trainsim::traces
