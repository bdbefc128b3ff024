#pragma once
// `trainsim kineto compare ... --plot FILE.svg`: the real timeline above the simulated one, on one
// time axis. Each panel is the first profiler step of its trace, one row per CUDA stream, kernels
// coloured compute / NCCL communication / memory copies and sets; kernels and gaps shorter than a
// pixel merge. Deterministic byte for byte (conv. 13).

#include <string>

#include "traces/kineto/trace.hpp"

namespace trainsim::traces {

std::string kineto_compare_svg(const KinetoTrace& real, const KinetoTrace& simulated, const std::string& title,
                               double width = 1600);

}  // namespace trainsim::traces
