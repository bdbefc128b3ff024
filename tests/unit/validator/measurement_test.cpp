#include "validator/measurement.hpp"

#include <gtest/gtest.h>

#include "sim/error.hpp"

namespace trainsim::validator {
namespace {

using nlohmann::json;

std::string error_of(const json& j) {
  try {
    measurements_from_json(j, "measurements");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

MeasurementSet sample() {
  MeasurementSet s;
  s.provenance = Provenance{"NVIDIA H100 80GB HBM3",
                            "h100-sxm-80gb",
                            "580.159.04",
                            "13.0",
                            "13.0.0",
                            "2.27.3",
                            "2025-06-01T12:00:00Z",
                            "trainsim validate --model llama3-8b",
                            "node17",
                            8,
                            "one decoder layer of TP rank 0 of 8",
                            "",
                            nlohmann::json{{"model", "llama3-8b"}, {"tp", 8}, {"seq_len", 8192}}};
  Measurement g;
  g.name = "attn.qkv.fwd";
  g.kind = OpKind::kGemm;
  g.m = 8192, g.n = 6144, g.k = 4096, g.batch = 1, g.precision = "fp8";
  g.flops = 2.0 * 8192 * 6144 * 4096;
  g.measured_s = 0.000612345678901234;
  g.best_s = 0.0005987654321;
  g.reps = 30;
  Measurement mem;
  mem.name = "mlp.swiglu.fwd";
  mem.kind = OpKind::kMemory;
  mem.bytes = int64_t{3} << 30;
  mem.kernels = 2;
  mem.measured_s = 1.1e-3;
  mem.reps = 30;
  Measurement c;
  c.name = "all_reduce";
  c.kind = OpKind::kCollective;
  c.op = "all_reduce";
  c.bytes = 1 << 20;
  c.ranks = 8;
  c.link_class = "nvlink";
  c.measured_s = 4.2e-5;
  c.reps = 20;
  Measurement l;
  l.name = "launch";
  l.kind = OpKind::kLaunch;
  l.measured_s = 2.5e-6;
  l.reps = 1000;
  Measurement a;
  a.name = "attn.core.bwd";
  a.kind = OpKind::kAttentionBwd;
  a.flops = 1.5e12;
  a.batch = 4;
  a.measured_s = 5e-3;
  s.items = {g, mem, c, l, a};
  return s;
}

void expect_same(const Measurement& a, const Measurement& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.m, b.m);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.k, b.k);
  EXPECT_EQ(a.batch, b.batch);
  EXPECT_EQ(a.precision, b.precision);
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.kernels, b.kernels);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.link_class, b.link_class);
  EXPECT_EQ(a.measured_s, b.measured_s);  // exactly: doubles are written to round-trip
  EXPECT_EQ(a.best_s, b.best_s);
  EXPECT_EQ(a.reps, b.reps);
}

TEST(Measurement, KindNamesRoundTrip) {
  for (const auto k : {OpKind::kGemm, OpKind::kMemory, OpKind::kAttentionFwd, OpKind::kAttentionBwd, OpKind::kCopyD2D,
                       OpKind::kCopyH2D, OpKind::kCopyD2H, OpKind::kLaunch, OpKind::kCollective, OpKind::kLayer})
    EXPECT_EQ(parse_op_kind(to_string(k), "kind"), k) << to_string(k);
  EXPECT_STREQ(to_string(OpKind::kAttentionFwd), "attention_fwd");
  EXPECT_STREQ(to_string(OpKind::kCopyH2D), "copy_h2d");
}

TEST(Measurement, JsonRoundTripsThroughTextExactly) {
  const MeasurementSet s = sample();
  const json j = json::parse(to_json(s).dump(2));
  const MeasurementSet back = measurements_from_json(j, "measurements");
  EXPECT_EQ(back.schema_version, 1);
  EXPECT_EQ(back.provenance.gpu_name, s.provenance.gpu_name);
  EXPECT_EQ(back.provenance.nccl_version, "2.27.3");
  EXPECT_EQ(back.provenance.command, s.provenance.command);
  EXPECT_EQ(back.provenance.gpus, 8);
  EXPECT_EQ(back.provenance.replay, s.provenance.replay);
  EXPECT_EQ(back.provenance.job, s.provenance.job);
  ASSERT_EQ(back.items.size(), s.items.size());
  for (size_t i = 0; i < s.items.size(); ++i) expect_same(back.items[i], s.items[i]);
  // Fields a kind does not use are left out of the file.
  EXPECT_FALSE(j.at("items")[1].contains("op"));
  EXPECT_FALSE(j.at("items")[1].contains("m"));
  EXPECT_EQ(j.at("items")[2].at("link_class"), "nvlink");
  // And the text is stable: writing what was read gives the same JSON.
  EXPECT_EQ(to_json(back), j);
}

TEST(Measurement, MalformedRecordsNameTheirPath) {
  json j = to_json(sample());
  j["items"][3]["kind"] = "lanch";
  EXPECT_EQ(error_of(j), "measurements.items[3].kind: unknown value \"lanch\" (did you mean \"launch\"?)");
  j = to_json(sample());
  j["items"][0].erase("measured_s");
  EXPECT_EQ(error_of(j), "measurements.items[0].measured_s: missing required key (add \"measured_s\": seconds)");
  j = to_json(sample());
  j["items"][0]["measured_s"] = 0;
  EXPECT_EQ(error_of(j), "measurements.items[0].measured_s: must be a positive time in seconds, got 0");
  j = to_json(sample());
  j["items"][0]["k"] = 0;
  EXPECT_EQ(error_of(j), "measurements.items[0].k: a gemm record needs m, n and k of at least 1");
  j = to_json(sample());
  j["items"][2]["op"] = "allreduce";
  EXPECT_EQ(error_of(j), "measurements.items[2].op: unknown value \"allreduce\" (did you mean \"all_reduce\"?)");
  j = to_json(sample());
  j["items"][2]["link_class"] = "pcie";
  EXPECT_EQ(error_of(j), "measurements.items[2].link_class: unknown value \"pcie\" (expected one of nvlink|ib|local)");
  j = to_json(sample());
  j["items"][1]["byte"] = 3;
  EXPECT_EQ(error_of(j), "measurements.items[1].byte: unknown key in measurement (did you mean \"bytes\"?)");
  j = to_json(sample());
  j["item"] = j["items"];
  EXPECT_EQ(error_of(j), "measurements.item: unknown key in measurements (did you mean \"items\"?)");
  j.erase("item");
  j["provenance"]["gpus"] = 0;
  EXPECT_EQ(error_of(j), "measurements.provenance.gpus: must be between 1 and 10000000, got 0");
  EXPECT_EQ(error_of(json::array()), "measurements: expected a JSON object, got an array");
  EXPECT_EQ(error_of(json{{"schema_version", 2}, {"items", json::array()}}),
            "measurements.schema_version: unsupported measurements schema version 2 (this trainsim reads version 1)");
  EXPECT_EQ(error_of(json{{"items", 3}}), "measurements.items: expected an array, got an integer");
}

}  // namespace
}  // namespace trainsim::validator
