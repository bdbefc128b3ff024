// FlowRecorder (traces/sinks/flow_recorder.cpp): flow spans and the link-utilization CSV.
#include "traces/sinks/flow_recorder.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace trainsim::traces {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(FlowRecorder, LinkCsvIntegratesEveryByteIntoItsBins) {
  sim::Engine engine;
  sim::flow::FlowNetwork net(engine);
  const auto a = net.add_link(sim::Bandwidth::gbyte_per_s(1), sim::Time::zero());
  const auto b = net.add_link(sim::Bandwidth::gbyte_per_s(1), sim::Time::zero());
  FlowRecorder rec(net, {"a", "b"});
  // Two 1 MB flows share link a (0.5 GB/s each): both end at 2 ms. Link b stays idle.
  for (int i = 0; i < 2; ++i) net.start(sim::Bytes(1'000'000), std::span<const sim::flow::LinkId>(&a, 1), nullptr);
  engine.run();
  ASSERT_EQ(rec.flows().size(), 2u);
  EXPECT_EQ(rec.flows()[0].end_ns, 2'000'000);
  EXPECT_EQ(rec.flows()[1].bytes, 1'000'000);
  std::ostringstream csv;
  rec.write_link_csv(csv, sim::Time::ms(4), 4);  // 1 ms bins
  const auto rows = lines(csv.str());
  ASSERT_EQ(rows.size(), 3u) << csv.str();  // header + link a's two busy bins; b and idle bins omitted
  EXPECT_EQ(rows[0], "link,label,capacity_GBps,bin_start_s,bin_end_s,bytes,utilization");
  EXPECT_EQ(rows[1], "0,a,1.000,0.000000000,0.001000000,1000000,1.0000");
  EXPECT_EQ(rows[2], "0,a,1.000,0.001000000,0.002000000,1000000,1.0000");
  (void)b;
}

TEST(FlowRecorder, SharedFlowsCountTheirCopiesOnSharedLinks) {
  sim::Engine engine;
  sim::flow::FlowNetwork net(engine);
  const auto a = net.add_link(sim::Bandwidth::gbyte_per_s(2), sim::Time::zero());
  FlowRecorder rec(net, {"spine"});
  const double usage = 2.0;  // two copies: 1 GB/s each, 2 GB/s on the link
  net.start_shared(sim::Bytes(1'000'000), std::span<const sim::flow::LinkId>(&a, 1), std::span<const double>(&usage, 1),
                   sim::Time::zero(), nullptr);
  engine.run();
  std::ostringstream csv;
  rec.write_link_csv(csv, sim::Time::ms(1), 1);
  EXPECT_EQ(lines(csv.str())[1], "0,spine,2.000,0.000000000,0.001000000,2000000,1.0000");
}

}  // namespace
}  // namespace trainsim::traces
