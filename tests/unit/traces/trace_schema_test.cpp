// The trace-event schema check (trace_schema.hpp) on a simulated job's trace and on the golden
// trace, plus the check's own negative cases.
#include "trace_schema.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "models/workload/run/simulate.hpp"
#include "traces/sinks/chrome_trace.hpp"
#include "traces/sinks/flow_recorder.hpp"
#include "traces/sinks/memory_slots.hpp"

namespace trainsim::traces {
namespace {

using nlohmann::json;
using testing::trace_schema_errors;

const std::string kGolden = std::string(TRAINSIM_SOURCE_DIR) + "/tests/golden/trace_tiny_gpt_a100/";

json read_json(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.is_open()) << path;
  return json::parse(f);
}

std::string joined(const std::vector<std::string>& errors) {
  std::ostringstream os;
  for (size_t i = 0; i < errors.size() && i < 10; ++i) os << errors[i] << "\n";
  return os.str();
}

// The golden job simulated with a recorder wired as `trainsim simulate --trace` does.
std::string simulated_trace() {
  namespace wl = models::workload;
  const wl::Job job = wl::resolve_job(wl::parse_job(read_json(kGolden + "config.json")));
  std::unique_ptr<ChromeTraceRecorder> recorder;
  std::unique_ptr<FlowRecorder> flows;
  std::ostringstream out;
  wl::SimulateOptions opt;
  opt.reuse_durations = false;
  opt.before_run = [&](sim::Engine& engine, const wl::Workload& w) {
    recorder = std::make_unique<ChromeTraceRecorder>(engine, w.graph);
    recorder->set_memory(&w.memory_events, memory_slots(job, w));
  };
  opt.on_network = [&](sim::flow::FlowNetwork& net, const topology::Topology&) {
    std::vector<std::string> labels;
    for (size_t l = 0; l < net.link_count(); ++l) {
      std::ostringstream os;  // GCC 12 -Wrestrict false positive on "l" + std::to_string
      os << 'l' << l;
      labels.push_back(os.str());
    }
    flows = std::make_unique<FlowRecorder>(net, std::move(labels));
    recorder->set_flows(flows.get());
  };
  opt.after_run = [&](const wl::Workload&, const sim::task::TaskExecutor&) { recorder->write(out); };
  const wl::SimulationResult r = wl::simulate(job, opt);
  EXPECT_TRUE(r.simulated);
  return out.str();
}

size_t count_ph(const json& doc, const std::string& ph, const std::string& name_prefix = "") {
  size_t n = 0;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == ph && (name_prefix.empty() || e.value("name", "").rfind(name_prefix, 0) == 0)) ++n;
  return n;
}

TEST(TraceSchema, SimulatedJobTraceIsValidAndDeterministic) {
  const std::string text = simulated_trace();
  const json doc = json::parse(text);
  const auto errors = trace_schema_errors(doc);
  EXPECT_TRUE(errors.empty()) << joined(errors);
  EXPECT_GT(count_ph(doc, "X"), 0u);
  EXPECT_GT(count_ph(doc, "C", "memory"), 0u);
  EXPECT_GT(count_ph(doc, "C", "link "), 0u);
  EXPECT_GT(count_ph(doc, "s"), 0u);
  EXPECT_EQ(count_ph(doc, "s"), count_ph(doc, "f"));
  // Memory counters: used within [0, capacity] for a job that fits, and above the static part.
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "C" && e["name"] == "memory") {
      EXPECT_GT(e["args"]["used_bytes"].get<int64_t>(), 0);
      EXPECT_LE(e["args"]["used_bytes"].get<int64_t>(), e["args"]["capacity_bytes"].get<int64_t>());
    }
  // At most kMaxTraceLinks link counters.
  std::set<std::string> links;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "C" && e["name"].get<std::string>().rfind("link ", 0) == 0) links.insert(e["name"]);
  EXPECT_LE(links.size(), ChromeTraceRecorder::kMaxTraceLinks);
  EXPECT_EQ(text, simulated_trace());  // same inputs, same bytes (conv. 13)
}

TEST(TraceSchema, GoldenTraceIsValid) {
  const json doc = read_json(kGolden + "expected/trace.json");
  const auto errors = trace_schema_errors(doc);
  EXPECT_TRUE(errors.empty()) << joined(errors);
  EXPECT_GT(count_ph(doc, "C"), 0u);
  EXPECT_GT(count_ph(doc, "s"), 0u);
}

TEST(TraceSchema, FindsViolations) {
  EXPECT_FALSE(trace_schema_errors(json::object()).empty());
  const auto bad = [](const char* events) {
    return trace_schema_errors(json::parse(std::string("{\"traceEvents\":") + events + "}"));
  };
  EXPECT_TRUE(bad(R"([{"ph":"X","pid":0,"tid":0,"ts":1,"dur":2,"name":"a"}])").empty());
  EXPECT_FALSE(bad(R"([{"ph":"Q","pid":0}])").empty());
  EXPECT_FALSE(bad(R"([{"ph":"X","tid":0,"ts":1,"dur":2,"name":"a"}])").empty());
  EXPECT_FALSE(bad(R"([{"ph":"X","pid":0,"tid":0,"ts":1,"dur":-2,"name":"a"}])").empty());
  EXPECT_FALSE(bad(R"([{"ph":"X","pid":0,"tid":0,"ts":5,"dur":1,"name":"a"},
                       {"ph":"X","pid":0,"tid":0,"ts":1,"dur":1,"name":"b"}])")
                   .empty());
  EXPECT_FALSE(bad(R"([{"ph":"C","pid":0,"ts":1,"name":"m","args":{"v":null}}])").empty());
  EXPECT_FALSE(bad(R"([{"ph":"C","pid":0,"ts":1,"name":"m","args":{"v":"x"}}])").empty());
  EXPECT_FALSE(bad(R"([{"ph":"s","pid":0,"tid":0,"ts":1,"id":1}])").empty());
  EXPECT_FALSE(
      bad(R"([{"ph":"s","pid":0,"tid":0,"ts":5,"id":1},{"ph":"f","pid":1,"tid":0,"ts":1,"id":1,"bp":"e"}])").empty());
  EXPECT_TRUE(
      bad(R"([{"ph":"s","pid":0,"tid":0,"ts":1,"id":1},{"ph":"f","pid":1,"tid":0,"ts":1,"id":1,"bp":"e"}])").empty());
  EXPECT_FALSE(bad(R"([{"ph":"M","pid":0,"name":"process_name","args":{}}])").empty());
}

}  // namespace
}  // namespace trainsim::traces
