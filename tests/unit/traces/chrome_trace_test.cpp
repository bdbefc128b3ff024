#include "traces/sinks/chrome_trace.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "sim/error.hpp"
#include "sim/task/executor.hpp"

namespace trainsim::traces {
namespace {

using nlohmann::json;
using sim::Bytes;
using sim::Engine;
using sim::Flops;
using sim::Time;
using sim::task::StreamId;
using sim::task::TaskExecutor;
using sim::task::TaskGraph;
using sim::task::TaskIndex;
using sim::task::TaskKind;
using sim::task::TaskSpec;

const char* const kQuotedLabel = "mlp \"x\\y\"";  // mlp "x\y"

// Two ranks, each with a compute and a tp stream. Streams are added out of rank order so the
// (pid, tid) sort is exercised: stream 0 = rank 1 compute, 1 = rank 0 compute, 2 = rank 0 tp,
// 3 = rank 1 tp.
//   a: rank 0 compute, 10 us                 b: rank 1 compute, 12.345 us
//   c: all-reduce on both tp streams, after a and b, 1234.567 us
//   d: rank 0 compute after c, 7 ns, label with a quote and a backslash, no args
//   e: rank 1 compute after c, 5 us, layer 3 only
// Hand-computed times (ns): a [0, 10000], b [0, 12345], c [12345, 1246912],
// d [1246912, 1246919], e [1246912, 1251912].
struct Scenario {
  TaskGraph graph;
  StreamId r1_compute = 0, r0_compute = 0, r0_tp = 0, r1_tp = 0;
  TaskIndex a = 0, b = 0, c = 0, d = 0, e = 0;

  Scenario() {
    r1_compute = graph.add_stream(1, "compute");
    r0_compute = graph.add_stream(0, "compute");
    r0_tp = graph.add_stream(0, "tp");
    r1_tp = graph.add_stream(1, "tp");

    TaskSpec sa;
    sa.kind = TaskKind::kCompute;
    sa.label = graph.intern("attn_fwd");
    sa.microbatch = 0;
    sa.layer = 0;
    sa.duration = Time::us(10);
    sa.flops = Flops(2e12);
    a = graph.add(sa, r0_compute);

    TaskSpec sb = sa;
    sb.duration = Time::ns(12345);
    sb.flops = Flops(1.5e12);
    b = graph.add(sb, r1_compute);

    TaskSpec sc;
    sc.kind = TaskKind::kCollective;
    sc.label = graph.intern("allreduce");
    sc.microbatch = 0;
    sc.layer = 0;
    sc.duration = Time::ns(1234567);
    sc.bytes = Bytes(1 << 20);
    c = graph.add(sc, std::vector<StreamId>{r0_tp, r1_tp});

    TaskSpec sd;
    sd.kind = TaskKind::kCompute;
    sd.label = graph.intern(kQuotedLabel);
    sd.duration = Time::ns(7);
    d = graph.add(sd, r0_compute);

    TaskSpec se;
    se.kind = TaskKind::kCompute;
    se.label = graph.intern("opt_step");
    se.layer = 3;
    se.duration = Time::us(5);
    se.flops = Flops(1e9);
    e = graph.add(se, r1_compute);

    graph.add_dep(a, c);
    graph.add_dep(b, c);
    graph.add_dep(c, d);
    graph.add_dep(c, e);
    graph.finalize();
  }
};

// Runs the scenario with a recorder attached and returns the trace text.
struct TracedRun {
  Scenario sc;
  Engine engine;
  std::unique_ptr<ChromeTraceRecorder> recorder;
  std::unique_ptr<TaskExecutor> exec;
  std::string text;

  TracedRun() {
    recorder = std::make_unique<ChromeTraceRecorder>(engine, sc.graph);
    exec = std::make_unique<TaskExecutor>(engine, sc.graph);
    exec->run();
    std::ostringstream os;
    recorder->write(os);
    text = os.str();
  }
};

std::vector<json> events_with_phase(const json& trace, const std::string& ph) {
  std::vector<json> out;
  for (const json& ev : trace.at("traceEvents"))
    if (ev.at("ph") == ph) out.push_back(ev);
  return out;
}

int64_t micros_to_ns(const json& v) { return std::llround(v.get<double>() * 1000.0); }

TEST(ChromeTraceRecorder, TopLevelFields) {
  TracedRun run;
  const json trace = json::parse(run.text);
  EXPECT_EQ(trace.at("schema_version"), 1);
  EXPECT_EQ(trace.at("displayTimeUnit"), "ns");
  ASSERT_TRUE(trace.at("traceEvents").is_array());
  EXPECT_EQ(run.recorder->finished_tasks(), 5u);
}

TEST(ChromeTraceRecorder, MetadataNamesRanksAndStreams) {
  TracedRun run;
  const json trace = json::parse(run.text);
  std::map<std::pair<int, std::string>, json> process;       // (pid, name) -> args
  std::map<std::tuple<int, int, std::string>, json> thread;  // (pid, tid, name) -> args
  for (const json& ev : events_with_phase(trace, "M")) {
    const std::string name = ev.at("name");
    if (name.rfind("process_", 0) == 0)
      process[{ev.at("pid").get<int>(), name}] = ev.at("args");
    else
      thread[{ev.at("pid").get<int>(), ev.at("tid").get<int>(), name}] = ev.at("args");
  }
  EXPECT_EQ(process.size(), 4u);  // process_name + process_sort_index for 2 ranks
  EXPECT_EQ((process[{0, "process_name"}].at("name")), "rank 0");
  EXPECT_EQ((process[{1, "process_name"}].at("name")), "rank 1");
  EXPECT_EQ((process[{1, "process_sort_index"}].at("sort_index")), 1);

  EXPECT_EQ(thread.size(), 8u);  // thread_name + thread_sort_index for 4 streams
  const Scenario& sc = run.sc;
  const std::vector<std::tuple<int, StreamId, std::string>> expected = {
      {1, sc.r1_compute, "compute"}, {0, sc.r0_compute, "compute"}, {0, sc.r0_tp, "tp"}, {1, sc.r1_tp, "tp"}};
  for (const auto& [rank, stream, label] : expected) {
    const int tid = static_cast<int>(stream);
    ASSERT_TRUE((thread.count({rank, tid, "thread_name"}))) << "rank " << rank << " stream " << stream;
    EXPECT_EQ((thread[{rank, tid, "thread_name"}].at("name")), label);
    EXPECT_EQ((thread[{rank, tid, "thread_sort_index"}].at("sort_index")), tid);
  }
}

TEST(ChromeTraceRecorder, OneCompleteEventPerTaskAndStreamWithExecutorTimes) {
  TracedRun run;
  const json trace = json::parse(run.text);
  const std::vector<json> xs = events_with_phase(trace, "X");
  const TaskGraph& g = run.sc.graph;

  size_t expected_events = 0;
  for (TaskIndex i = 0; i < g.size(); ++i) {
    const StreamId* ss = g.streams_of(i);
    for (uint16_t k = 0; k < g.task(i).n_streams; ++k) {
      ++expected_events;
      const int pid = g.stream(ss[k]).rank;
      const auto tid = static_cast<int>(ss[k]);
      int found = 0;
      for (const json& ev : xs) {
        if (ev.at("pid") != pid || ev.at("tid") != tid || ev.at("name") != g.display_name(i)) continue;
        ++found;
        EXPECT_EQ(micros_to_ns(ev.at("ts")), run.exec->start_time(i).count_ns()) << g.display_name(i);
        EXPECT_EQ(micros_to_ns(ev.at("dur")), (run.exec->end_time(i) - run.exec->start_time(i)).count_ns())
            << g.display_name(i);
        EXPECT_EQ(ev.at("cat"), sim::task::to_string(g.task(i).spec.kind));
      }
      EXPECT_EQ(found, 1) << g.display_name(i) << " on stream " << ss[k];
    }
  }
  EXPECT_EQ(expected_events, 6u);  // the collective appears on both tp streams
  EXPECT_EQ(xs.size(), expected_events);

  // The executor agrees with the hand-computed schedule, so the checks above are not vacuous.
  EXPECT_EQ(run.exec->start_time(run.sc.c).count_ns(), 12345);
  EXPECT_EQ(run.exec->end_time(run.sc.e).count_ns(), 1251912);
}

TEST(ChromeTraceRecorder, TimesAreExactFixedThreeDecimals) {
  TracedRun run;
  // c on rank 0 tp: starts at 12345 ns and lasts 1234567 ns.
  EXPECT_NE(run.text.find("\"pid\":0,\"tid\":2,\"ts\":12.345,\"dur\":1234.567,\"name\":\"allreduce mb0 L0\""),
            std::string::npos)
      << run.text;
  // d: 7 ns at 1246912 ns; a: starts at zero.
  EXPECT_NE(run.text.find("\"ts\":1246.912,\"dur\":0.007,"), std::string::npos) << run.text;
  EXPECT_NE(run.text.find("\"ts\":0.000,\"dur\":10.000,"), std::string::npos) << run.text;
}

TEST(ChromeTraceRecorder, ArgsOmitAbsentFields) {
  TracedRun run;
  const json trace = json::parse(run.text);
  std::map<std::string, json> by_name;
  for (const json& ev : events_with_phase(trace, "X"))
    by_name[ev.at("name").get<std::string>() + "@" + std::to_string(ev.at("pid").get<int>())] = ev;

  const json& a = by_name.at("attn_fwd mb0 L0@0");
  EXPECT_EQ(a.at("args").at("flops").get<double>(), 2e12);
  EXPECT_EQ(a.at("args").at("microbatch"), 0);
  EXPECT_EQ(a.at("args").at("layer"), 0);
  EXPECT_FALSE(a.at("args").contains("bytes"));
  EXPECT_EQ(by_name.at("attn_fwd mb0 L0@1").at("args").at("flops").get<double>(), 1.5e12);

  for (const char* key : {"allreduce mb0 L0@0", "allreduce mb0 L0@1"}) {
    const json& c = by_name.at(key);
    EXPECT_EQ(c.at("cat"), "collective");
    EXPECT_EQ(c.at("args").at("bytes"), 1 << 20);
    EXPECT_FALSE(c.at("args").contains("flops"));
  }

  const json& e = by_name.at("opt_step L3@1");
  EXPECT_EQ(e.at("args").at("layer"), 3);
  EXPECT_EQ(e.at("args").at("flops").get<double>(), 1e9);
  EXPECT_FALSE(e.at("args").contains("microbatch"));

  EXPECT_FALSE(by_name.at(std::string(kQuotedLabel) + "@0").contains("args"));
}

TEST(ChromeTraceRecorder, EventsSortedByPidTidTs) {
  TracedRun run;
  const json trace = json::parse(run.text);
  bool seen_x = false;
  std::tuple<int, int, double> prev{-1, -1, -1.0};
  for (const json& ev : trace.at("traceEvents")) {
    if (ev.at("ph") == "M") {
      EXPECT_FALSE(seen_x) << "metadata after a complete event";
      continue;
    }
    seen_x = true;
    const std::tuple<int, int, double> key{ev.at("pid"), ev.at("tid"), ev.at("ts")};
    EXPECT_LE(prev, key) << ev.dump();
    prev = key;
  }
  EXPECT_TRUE(seen_x);
}

TEST(ChromeTraceRecorder, SameInputSameBytes) {
  TracedRun first;
  TracedRun second;
  EXPECT_EQ(first.text, second.text);
  std::ostringstream again;
  first.recorder->write(again);
  EXPECT_EQ(first.text, again.str());
}

TEST(ChromeTraceRecorder, EscapesQuotesAndBackslashesInNames) {
  TracedRun run;
  EXPECT_NE(run.text.find(R"("name":"mlp \"x\\y\"")"), std::string::npos) << run.text;
  const json trace = json::parse(run.text);
  int found = 0;
  for (const json& ev : events_with_phase(trace, "X")) found += ev.at("name") == kQuotedLabel;
  EXPECT_EQ(found, 1);
}

TEST(ChromeTraceRecorder, SortsByStartAndSkipsUnfinishedTasks) {
  TaskGraph g;
  const StreamId s = g.add_stream(0, "compute");
  TaskSpec spec;
  spec.label = g.intern("t");
  const TaskIndex t0 = g.add(spec, s);
  spec.layer = 1;
  const TaskIndex t1 = g.add(spec, s);
  spec.layer = 2;
  const TaskIndex t2 = g.add(spec, s);
  g.finalize();

  Engine engine;
  ChromeTraceRecorder rec(engine, g);
  auto& sig = engine.signals();
  sig.on_task_start.emit(t1, Time::ns(0));
  sig.on_task_end.emit(t1, Time::ns(5));
  sig.on_task_start.emit(t0, Time::ns(10));
  sig.on_task_end.emit(t0, Time::ns(20));
  sig.on_task_start.emit(t2, Time::ns(30));  // never ends
  EXPECT_EQ(rec.finished_tasks(), 2u);

  std::ostringstream os;
  rec.write(os);
  const json trace = json::parse(os.str());
  const std::vector<json> xs = events_with_phase(trace, "X");
  ASSERT_EQ(xs.size(), 2u);
  EXPECT_EQ(xs[0].at("name"), "t L1");
  EXPECT_EQ(xs[1].at("name"), "t");
  EXPECT_EQ(micros_to_ns(xs[1].at("dur")), 10);
}

TEST(ChromeTraceRecorder, NoRunGivesMetadataOnly) {
  Scenario sc;
  Engine engine;
  ChromeTraceRecorder rec(engine, sc.graph);
  std::ostringstream os;
  rec.write(os);
  const json trace = json::parse(os.str());
  EXPECT_EQ(events_with_phase(trace, "X").size(), 0u);
  EXPECT_EQ(events_with_phase(trace, "M").size(), 12u);
}

TEST(ChromeTraceRecorder, WriteFileMatchesWrite) {
  TracedRun run;
  const std::string path = ::testing::TempDir() + "chrome_trace_test.json";
  run.recorder->write_file(path);
  std::ifstream f(path, std::ios::binary);
  std::stringstream content;
  content << f.rdbuf();
  EXPECT_EQ(content.str(), run.text);
  std::remove(path.c_str());
}

TEST(ChromeTraceRecorder, WriteFileFailureIsConfigError) {
  TracedRun run;
  const std::string path = "/nonexistent-trainsim-dir/sub/trace.json";
  try {
    run.recorder->write_file(path);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& err) {
    EXPECT_EQ(err.path(), "--trace");
    EXPECT_EQ(err.message(), "cannot write " + path);
    EXPECT_FALSE(err.hint().empty());
  }
}

std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

TEST(AppendJsonString, EscapesSpecialAndControlCharacters) {
  EXPECT_EQ(json_string("plain"), "\"plain\"");
  EXPECT_EQ(json_string("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(json_string("\n\t\r\b\f"), R"("\n\t\r\b\f")");
  EXPECT_EQ(json_string(std::string_view("\x01\x1f\0", 3)), R"("\u0001\u001f\u0000")");
}

TEST(AppendJsonString, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(json_string("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
  // A lone continuation byte, a truncated sequence, an overlong '/' and a UTF-16 surrogate.
  EXPECT_EQ(json_string("a\x80"
                        "b"),
            R"("a\ufffdb")");
  EXPECT_EQ(json_string("x\xe2\x82"), R"("x\ufffd\ufffd")");
  EXPECT_EQ(json_string("\xc0\xaf"), R"("\ufffd\ufffd")");
  EXPECT_EQ(json_string("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");
  // Whatever the input, the result parses back.
  const std::string nasty("q\"\\\x01\xff\xc3\xa9", 7);
  json parsed;
  EXPECT_NO_THROW(parsed = json::parse(json_string(nasty)));
  EXPECT_TRUE(parsed.is_string());
  EXPECT_EQ(json::parse(json_string("a\"b\\c\n")).get<std::string>(), "a\"b\\c\n");
}

std::string micros(int64_t ns) {
  std::string out;
  append_micros(out, ns);
  return out;
}

TEST(AppendMicros, ExactFixedThreeDecimals) {
  EXPECT_EQ(micros(0), "0.000");
  EXPECT_EQ(micros(7), "0.007");
  EXPECT_EQ(micros(999), "0.999");
  EXPECT_EQ(micros(1000), "1.000");
  EXPECT_EQ(micros(1234567), "1234.567");
  EXPECT_EQ(micros(-1500), "-1.500");
  // Beyond 2^53 ns a double would lose the last digits; integer formatting does not.
  EXPECT_EQ(micros(9007199254740993), "9007199254740.993");
  EXPECT_EQ(micros(std::numeric_limits<int64_t>::max()), "9223372036854775.807");
  EXPECT_EQ(micros(std::numeric_limits<int64_t>::min()), "-9223372036854775.808");
}

}  // namespace
}  // namespace trainsim::traces
