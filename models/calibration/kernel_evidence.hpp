#pragma once
// What a set of kernel measurements covered (models/stack/evidence.hpp): the GPU they ran on, the
// precisions of their GEMMs, the ranges of the GEMM dimensions and of the collectives' buffers,
// and the cluster whose links they measured. A calibration fitted to them (`trainsim validate`,
// `trainsim kineto calibrate`) carries it, and a job that leaves it is marked extrapolated
// (models/workload/job/prediction_band.hpp): its kernels run on constants nothing measured.

#include <string>

#include "models/calibration/measurement.hpp"
#include "models/stack/evidence.hpp"

namespace trainsim::models::calibration {

// `gpu`: the GPU preset measured; `cluster`: the cluster preset whose links the collectives ran on
// ("" when the fit had none). Records of no kind restrict nothing: no GEMM records, no precision
// or GEMM ranges; no collective between two or more ranks, no cluster or message range.
stack::Evidence kernel_evidence(const MeasurementSet& ms, const std::string& gpu, const std::string& cluster);

}  // namespace trainsim::models::calibration
