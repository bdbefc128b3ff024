// Chakra export (traces/chakra/export.*): the committed example under traces/examples/chakra is
// exactly what the exporter writes for its job (TRAINSIM_UPDATE_GOLDEN=1 rewrites it); the
// files have chakra_jsonizer's shape; export -> import -> replay on the same cluster gives the
// simulated iteration time back; the example replayed on faster GPUs runs faster.
#include "traces/chakra/export.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "chakra_test_util.hpp"
#include "models/presets/catalog.hpp"
#include "models/workload/run/simulate.hpp"
#include "traces/chakra/replay.hpp"
#include "traces/chakra/trace.hpp"
#include "traces/chakra/workload.hpp"

namespace trainsim::traces::chakra {
namespace {

using test::example;
using test::replay_job;

const char* kPrefix = "tiny-gpt-tp2-pp2";

models::workload::Job example_job(const std::string& network = "flow", bool tied_embeddings = true) {
  sim::config::Json j = models::presets::load_json_file(example(std::string(kPrefix) + ".job.json"), "job");
  j["network"] = network;
  j["model"]["tied_embeddings"] = tied_embeddings;
  return models::workload::resolve_job(models::workload::parse_job(j));
}

struct Simulated {
  models::workload::SimulationResult result;
  ExportedTrace trace;
};

Simulated simulate_and_export(const models::workload::Job& job) {
  Simulated s;
  models::workload::SimulateOptions o;
  o.fidelity = models::workload::Fidelity::kFullRanks;
  o.after_run = [&](const models::workload::Workload& w, const sim::task::TaskExecutor& exec) {
    s.trace = export_trace(w, exec, job);
  };
  s.result = models::workload::simulate(job, o);
  return s;
}

Trace parse_all(const ExportedTrace& e) {
  Trace t;
  for (size_t r = 0; r < e.files.size(); ++r) {
    std::ostringstream name;
    name << "rank" << r;
    t.ranks.push_back(parse_rank_trace(e.files[r], name.str()));
  }
  return t;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ChakraExport, ExampleIsWhatTheExporterWrites) {
  const Simulated s = simulate_and_export(example_job());
  ASSERT_EQ(s.trace.files.size(), 4u);
  EXPECT_EQ(s.trace.dropped_deps, 0);
  const char* update = std::getenv("TRAINSIM_UPDATE_GOLDEN");
  size_t total = 0;
  for (size_t r = 0; r < s.trace.files.size(); ++r) {
    std::ostringstream name;
    name << kPrefix << "." << r << ".json";
    const std::string path = example(name.str());
    if (update && std::string(update) == "1") {
      std::ofstream(path, std::ios::binary) << s.trace.files[r];
      continue;
    }
    EXPECT_EQ(read_file(path), s.trace.files[r]) << path << " is stale: rerun with TRAINSIM_UPDATE_GOLDEN=1";
    total += s.trace.files[r].size();
  }
  // The examples stay small (the whole example folder is a few hundred KB).
  EXPECT_LT(total, 400u * 1024u);
}

TEST(ChakraExport, FilesHaveTheJsonizerShape) {
  const Simulated s = simulate_and_export(example_job());
  const std::string& text = s.trace.files[0];
  // MessageToJson of the GlobalMetadata, then of each Node, back to back.
  EXPECT_EQ(text.rfind("{\n  \"attr\": [\n", 0), 0u);
  EXPECT_NE(text.find("}{\n  \"name\": "), std::string::npos);  // node 0: no "id" (a default)
  EXPECT_NE(text.find("}{\n  \"id\": \"1\",\n  \"name\": "), std::string::npos);
  EXPECT_NE(text.find("\"type\": \"COMM_COLL_NODE\""), std::string::npos);
  EXPECT_NE(text.find("\"type\": \"COMM_SEND_NODE\""), std::string::npos);
  EXPECT_NE(text.find("\"dataDeps\": [\n"), std::string::npos);
  EXPECT_NE(text.find("\"int64Val\": \""), std::string::npos);  // 64-bit integers as strings
  EXPECT_NE(text.find("\"int32Val\": 1"), std::string::npos);   // 32-bit ones as numbers
  EXPECT_EQ(text.find("data_deps"), std::string::npos);
  const Trace t = parse_all(s.trace);
  EXPECT_EQ(recorded_gpu_name(t), std::optional<std::string>(example_job().gpu.name));
  EXPECT_EQ(t.ranks[3].metadata.at("rank").i, 3);
  EXPECT_EQ(t.ranks[3].metadata.at("world_size").i, 4);
}

TEST(ChakraExport, RoundTripGivesTheIterationBack) {
  // Durations are written in whole microseconds, so each task moves by at most 0.5 us; on the
  // flow network the replayed collectives are the same flows on the same topology, and with the
  // alpha-beta model the same formulas on the same group placement. (The generated job times the
  // tied-embedding all-reduce between the first and last stage as if they sat in two servers,
  // while a replay places each group from its GPU ids: the analytic case leaves it out.)
  for (const std::string network : {"flow", "analytic"}) {
    const models::workload::Job job = example_job(network, network == "flow");
    const Simulated s = simulate_and_export(job);
    const Trace t = parse_all(s.trace);
    const models::workload::Job rj = replay_job(job.cluster.name, job.gpus, "", network);
    const ImportedWorkload iw = import_workload(t, rj, {});
    EXPECT_EQ(iw.stats.rescaled, 0);
    const ReplayResult r = replay(iw, rj);
    const double rel = std::fabs(r.iteration.seconds() / s.result.iteration.seconds() - 1.0);
    EXPECT_LT(rel, 0.005) << network << ": simulated " << s.result.iteration.seconds() << " s, replayed "
                          << r.iteration.seconds() << " s";
    for (const RankTime& rt : r.ranks)
      EXPECT_EQ(rt.compute + rt.collective + rt.transfer + rt.memory + rt.cpu + rt.idle, r.iteration);
  }
}

TEST(ChakraExport, CommittedExampleRunsFasterOnFasterGpus) {
  const Trace t = read_trace(example(kPrefix), "--chakra");
  ASSERT_EQ(t.ranks.size(), 4u);
  const auto recorded = recorded_gpu_name(t);
  ASSERT_TRUE(recorded.has_value());
  ImportOptions o;
  o.recorded_gpu = models::hardware::parse_gpu(models::presets::find("gpus", *recorded, "gpu"), "gpu");
  const models::workload::Job a100 = replay_job("dgx-a100", 4), h100 = replay_job("dgx-h100", 4),
                              a100_on_h100_net = replay_job("dgx-h100", 4, "a100-sxm-80gb");
  const ImportedWorkload on_a100 = import_workload(t, a100, o), on_h100 = import_workload(t, h100, o);
  EXPECT_EQ(on_a100.stats.rescaled, 0);
  EXPECT_GT(on_h100.stats.rescaled, 0);
  const sim::Time ta = replay(on_a100, a100).iteration, th = replay(on_h100, h100).iteration;
  const sim::Time tn = replay(import_workload(t, a100_on_h100_net, o), a100_on_h100_net).iteration;
  // H100s compute faster and talk over faster NVLink and NICs; A100s on the H100 cluster's
  // network sit in between.
  EXPECT_LT(th, ta);
  EXPECT_LE(tn, ta);
  EXPECT_GT(tn, th);
}

}  // namespace
}  // namespace trainsim::traces::chakra
