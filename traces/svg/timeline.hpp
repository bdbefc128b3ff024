#pragma once
// A Gantt timeline of one simulated iteration as SVG: one row per (simulated rank, stream), each
// task a rectangle coloured by what it does (forward, backward, recompute, optimizer, TP / DP / PP
// / CP / EP communication, memory copies), idle gaps (pipeline bubbles) left blank, a time axis,
// a legend and a title. Tasks shorter than a pixel are merged with their neighbours so the file
// stays small for any job; the output is deterministic byte for byte (conv. 13).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/task/executor.hpp"
#include "sim/task/task_graph.hpp"

namespace trainsim::traces {

// What a task does, for its colour; decided from its kind and label.
enum class TimelineCategory : uint8_t {
  kForward,
  kBackward,
  kRecompute,
  kOptimizer,
  kTp,
  kDp,
  kPp,
  kCp,
  kEp,
  kMemory,
  kOtherComm,
};
constexpr int kTimelineCategories = 11;
const char* to_string(TimelineCategory c);
TimelineCategory timeline_category(sim::task::TaskKind kind, std::string_view label);
// The category's fill colour, "#rrggbb" (Tableau 10 plus grey), shared by the SVG and the UI.
const char* timeline_colour(TimelineCategory c);

struct TimelineOptions {
  std::string title;           // first line of the heading (e.g. "llama3-8b on 16 x H100")
  double width = 1600;         // canvas width, pixels
  double row_height = 14;      // pixels per stream row
  size_t max_rects = 40000;    // merge more coarsely until the task rectangles are at most this many
  size_t max_tooltips = 5000;  // rectangles get a <title> tooltip only when there are at most this many
};

struct TimelineStats {
  size_t rows = 0;      // streams drawn
  size_t tasks = 0;     // finished tasks drawn (a task on n streams counts n times)
  size_t rects = 0;     // task rectangles written (tasks after merging)
  int64_t span_ns = 0;  // the time axis: 0 to the last task end
  double merge_px = 0;  // tasks and gaps shorter than this were merged
};

// The timeline of the tasks `exec` ran on `graph`; tasks that never finished are left out.
std::string timeline_svg(const sim::task::TaskGraph& graph, const sim::task::TaskExecutor& exec,
                         const TimelineOptions& options, TimelineStats* stats = nullptr);

}  // namespace trainsim::traces
