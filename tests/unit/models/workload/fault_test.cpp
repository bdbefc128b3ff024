// Fault specs (models/workload/run/fault.cpp): the --fault syntax, its errors, and the check against
// a job and its topology.
#include "models/workload/run/fault.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "../test_support.hpp"
#include "models/hardware/cluster_spec.hpp"
#include "topology/graph.hpp"
#include "topology/spec.hpp"

namespace trainsim::models::workload {
namespace {

using sim::config::Json;
using testing::config_error;

TEST(Fault, ParsesEveryKind) {
  Fault f = parse_fault("link:rail_leaf0/spine3@2ms");
  EXPECT_EQ(f.kind, Fault::Kind::kLinkDown);
  EXPECT_EQ(f.a, "rail_leaf0");
  EXPECT_EQ(f.b, "spine3");
  EXPECT_EQ(f.at, sim::Time::ms(2));
  EXPECT_EQ(f.reroute_delay, kDefaultRerouteDelay);

  f = parse_fault("link:gpu0/rail_leaf0@1.5ms*0.25");
  EXPECT_EQ(f.kind, Fault::Kind::kLinkDegrade);
  EXPECT_DOUBLE_EQ(f.factor, 0.25);
  EXPECT_EQ(f.at, sim::Time::us(1500));

  f = parse_fault("uplink:17@2ms,reroute=10s");
  EXPECT_EQ(f.kind, Fault::Kind::kLinkDown);
  EXPECT_TRUE(f.a.empty());
  EXPECT_EQ(f.gpu, 17);
  EXPECT_EQ(f.reroute_delay, sim::Time::s(10));

  f = parse_fault("gpu:3@5ms");
  EXPECT_EQ(f.kind, Fault::Kind::kGpuDown);
  EXPECT_EQ(f.gpu, 3);
  EXPECT_EQ(f.at, sim::Time::ms(5));

  f = parse_fault("slow-gpu:17*0.5");  // from the start
  EXPECT_EQ(f.kind, Fault::Kind::kGpuSlow);
  EXPECT_DOUBLE_EQ(f.factor, 0.5);
  EXPECT_EQ(f.at, sim::Time::zero());
  EXPECT_EQ(parse_fault("uplink:4@0*0.1").at, sim::Time::zero());
}

TEST(Fault, TextRoundTrips) {
  for (const char* spec :
       {"link:rail_leaf0/spine3@2ms", "link:gpu0/rail_leaf0@1500us*0.25", "uplink:17@2ms,reroute=10s", "gpu:3@5ms",
        "slow-gpu:17@0*0.5", "slow-gpu:2@7ns*0.1", "uplink:0@1s*0.75"}) {
    EXPECT_EQ(to_string(parse_fault(spec)), spec);
  }
  EXPECT_EQ(to_string(Fault::slow_gpu(5, 0.5)), "slow-gpu:5@0*0.5");
  EXPECT_EQ(to_string(Fault::degraded_uplink(5, 0.25)), "uplink:5@0*0.25");
  EXPECT_EQ(to_string(Fault::dead_uplink(5, sim::Time::ms(3))), "uplink:5@3ms");
  EXPECT_EQ(to_string(Fault::dead_gpu(5, sim::Time::ms(3))), "gpu:5@3ms");
}

// `head` followed by the syntax hint (ostringstream: GCC 12 warns about long string + chains).
std::string with_syntax(const std::string& head, const char* near = "") {
  std::ostringstream s;
  s << head << " (" << near
    << "write link:A/B@T[*F][,reroute=D], uplink:R@T[*F], gpu:R@T or slow-gpu:R[@T]*S, e.g. "
       "link:rail_leaf0/spine3@2ms)";
  return s.str();
}

TEST(Fault, MalformedSpecsAreOneLineErrorsWithTheSyntax) {
  EXPECT_EQ(config_error([] { parse_fault("gpu3@5ms"); }),
            with_syntax("--fault: expected KIND:TARGET in \"gpu3@5ms\""));
  EXPECT_EQ(config_error([] { parse_fault("gpus:3@5ms"); }),
            with_syntax("--fault: unknown fault kind \"gpus\" in \"gpus:3@5ms\"", "did you mean gpu? "));
  EXPECT_EQ(config_error([] { parse_fault("gpu:3@-5ms"); }),
            with_syntax("--fault: time must not be negative, got -5ms in \"gpu:3@-5ms\""));
  EXPECT_EQ(config_error([] { parse_fault("slow-gpu:3*1.5"); }),
            with_syntax("--fault: the speed must lie strictly between 0 and 1, got 1.5 in \"slow-gpu:3*1.5\""));
  EXPECT_EQ(config_error([] { parse_fault("link:a/b@1ms*0"); }),
            with_syntax("--fault: the capacity factor must lie strictly between 0 and 1, got 0 in \"link:a/b@1ms*0\""));
  EXPECT_EQ(config_error([] { parse_fault("link:a@1ms"); }),
            with_syntax("--fault: expected two node names A/B, got \"a\" in \"link:a@1ms\""));
  EXPECT_EQ(config_error([] { parse_fault("gpu:x@1ms"); }),
            with_syntax("--fault: expected a GPU rank (0, 1, ...), got \"x\" in \"gpu:x@1ms\""));
  EXPECT_EQ(config_error([] { parse_fault("gpu:1@5"); }),
            with_syntax("--fault: expected a duration like 2ms for the time, got \"5\" in \"gpu:1@5\""));
  EXPECT_EQ(config_error([] { parse_fault("slow-gpu:1@2ms"); }),
            with_syntax("--fault: a slow GPU needs its speed, *S in \"slow-gpu:1@2ms\""));
  EXPECT_EQ(config_error([] { parse_fault("gpu:1@2ms,reroute=1ms"); }),
            with_syntax("--fault: unexpected option \"reroute=1ms\" (only link faults take reroute=D) in "
                        "\"gpu:1@2ms,reroute=1ms\""));
}

// A factor stretches what it slows by 1/F: the floor is 1e-6 (sim::kMinSlowdownFactor), named
// with the fix; 1e-6 itself is a slowdown.
TEST(Fault, FactorsBelowAMillionthAreFailures) {
  EXPECT_EQ(parse_fault("slow-gpu:3*1e-6").factor, 1e-6);
  EXPECT_EQ(parse_fault("uplink:0@0*1e-6").factor, 1e-6);
  EXPECT_EQ(config_error([] { parse_fault("slow-gpu:3*1e-300"); }),
            "--fault: the speed must be at least 1e-6, got 1e-300 in \"slow-gpu:3*1e-300\" (a GPU slower than that "
            "has failed: write gpu:R@T)");
  EXPECT_EQ(config_error([] { parse_fault("slow-gpu:3*5e-324"); }),
            "--fault: the speed must be at least 1e-6, got 5e-324 in \"slow-gpu:3*5e-324\" (a GPU slower than that "
            "has failed: write gpu:R@T)");
  EXPECT_EQ(config_error([] { parse_fault("uplink:0@0*9.99e-7"); }),
            "--fault: the capacity factor must be at least 1e-6, got 9.99e-7 in \"uplink:0@0*9.99e-7\" (a link "
            "slower than that has failed: drop *F)");
}

Json job16() {
  return Json{{"model", "llama3-8b"}, {"cluster", "dgx-h100"}, {"gpus", 16}, {"tp", 8}, {"global_batch", 16}};
}

TEST(Fault, CheckedAgainstTheJobAndItsTopology) {
  const Job job = testing::job(job16());
  EXPECT_EQ(config_error([&] { check_faults(job, {parse_fault("gpu:16@1ms")}); }),
            "--fault: GPU 16 is not in the job (ranks 0 to 15) in \"gpu:16@1ms\" (pick a rank below 16)");
  EXPECT_EQ(config_error([&] { check_faults(job, {parse_fault("link:rail_leaf0/spine33@1ms")}); }),
            "--fault: no node named \"spine33\" (did you mean \"spine3\"?)");
  EXPECT_EQ(config_error([&] { check_faults(job, {parse_fault("link:gpu0/spine3@1ms")}); }),
            "--fault: no link between \"gpu0\" and \"spine3\" (name two nodes joined by a cable (see `trainsim "
            "topology --dot`))");
  EXPECT_EQ(config_error([&] {
              check_faults(job, {parse_fault("link:gpu0/rail_leaf0@1ms"), parse_fault("uplink:15@0*0.5"),
                                 parse_fault("slow-gpu:15*0.5"), parse_fault("gpu:0@1ms")});
            }),
            "");
  Json analytic = job16();
  analytic["network"] = "analytic";
  EXPECT_EQ(config_error([&] { check_faults(testing::job(analytic), {parse_fault("uplink:1@1ms")}); }),
            "--fault: link faults need the flow network, in \"uplink:1@1ms\" (drop --network analytic)");
  EXPECT_EQ(config_error([&] { check_faults(testing::job(analytic), {parse_fault("gpu:1@1ms")}); }), "");
}

TEST(Fault, AnUplinkIsTheGpusCableIntoTheFabric) {
  const Job job = testing::job(job16());
  const topology::Topology t = topology::build_topology(hardware::network_spec(job.cluster), 16, "n");
  const auto links = fault_links(parse_fault("uplink:9@1ms"), t);
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(t.node(t.link_src(links[0])).name, "gpu9");
  EXPECT_EQ(t.node(t.link_dst(links[0])).name, "rail_leaf1");
  EXPECT_EQ(links[1], topology::Topology::reverse(links[0]));
  EXPECT_EQ(fault_links(parse_fault("link:rail_leaf1/gpu9@1ms"), t), links);
}

}  // namespace
}  // namespace trainsim::models::workload
