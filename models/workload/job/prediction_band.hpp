#pragma once
// How far to trust a prediction: the relative error band of a job's iteration time and
// throughput, from the evidence behind its constants, and whether the job lies outside that
// evidence (extrapolated). docs/calibration.md, "Reading the band".
//
//   - A calibration with a cross-validated error (`trainsim calibrate`): its band, and its
//     evidence (the runs' stacks, precisions, clusters and size ranges).
//   - Otherwise the stack preset's accuracy entries (the published runs its accuracy suite
//     checks): the entry whose evidence holds the job (the one with the most runs when several do).
//   - Outside every entry: extrapolated, with the nearest entry's gaps listed and its band
//     doubled (at least 15 %); a stack no published run checks gets 25 %.

#include <string>
#include <vector>

#include "models/workload/job/job.hpp"
#include "sim/config/schema.hpp"

namespace trainsim::models::workload {

struct PredictionBand {
  double relative = 0;  // +- fraction of the iteration time (and throughput)
  bool extrapolated = false;
  std::vector<std::string> outside;  // what of the job no evidence covers
  std::string basis;                 // where the band comes from
  sim::config::Json to_json() const;
};

PredictionBand prediction_band(const Job& job);

// What a set of jobs covers, as evidence (models/stack/evidence.hpp): their stacks, precisions, clusters
// and GPU presets, the ranges of their GPU counts, parameters (billions, to 3 decimals) and
// sequence lengths, and whether dense and MoE models are among them. A calibration's runs and an
// accuracy suite's rows are described by it.
stack::Evidence evidence_of(const std::vector<Job>& jobs);

}  // namespace trainsim::models::workload
