#pragma once
// A Scene from a Chrome / Perfetto trace-event file: what `trainsim simulate --trace` writes (a
// process per rank, a thread per stream, "memory" and "link ..." counters), or any trace in that
// format, a PyTorch profiler (Kineto) trace included (its GPU kernels, copies and sets; CPU-side
// events are left out when the trace has GPU events). Complete ("X") events become tasks; a
// trace has no dependencies, so there is no critical path. Link counters become a topology of the
// links they name ("a->b kind").

#include <string>

#include "sim/config/schema.hpp"
#include "ui/scene/scene.hpp"

namespace trainsim::ui {

// Throws ConfigError at `path` for a file that cannot be read, is not JSON, or has no
// traceEvents array or no complete event.
Scene trace_scene(const sim::config::Json& trace, const std::string& path);
Scene load_trace_scene(const std::string& file);

// Whether a JSON document is a trace-event file (an object with "traceEvents", or an array of
// events) rather than a job.
bool is_trace(const sim::config::Json& doc);

}  // namespace trainsim::ui
