#include "traces/sinks/chrome_trace.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <utility>

#include "sim/error.hpp"

namespace trainsim::traces {

// The text is streamed out in chunks of about this size, so memory stays flat for huge traces.
constexpr size_t kFlushBytes = size_t{1} << 20;

// Buffered text output: events are appended to a string that is flushed in large chunks.
class TraceText {
 public:
  explicit TraceText(std::ostream& os) : os_(os) { buf_.reserve(kFlushBytes + 4096); }
  std::string& buf() { return buf_; }
  // Starts a new element of the traceEvents array.
  void begin_event() {
    buf_ += first_ ? "\n" : ",\n";
    first_ = false;
  }
  void maybe_flush() {
    if (buf_.size() >= kFlushBytes) flush();
  }
  void flush() {
    os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  std::ostream& os_;
  std::string buf_;
  bool first_ = true;
};

namespace {

using sim::TaskIndex;
using sim::task::StreamId;
using sim::task::Task;
using sim::task::TaskGraph;
using sim::task::TaskSpec;

constexpr int64_t kNotSeen = std::numeric_limits<int64_t>::min();

template <typename Int>
void append_int(std::string& out, Int v) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

// Shortest round-trip digits in fixed notation ("1500000000000", "0.5"): canonical and
// locale-independent. Non-finite values are not JSON numbers and are written as null.
void append_double(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[400];  // the longest fixed-notation double is about 330 characters
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  TRAINSIM_ASSERT(res.ec == std::errc(), "cannot format ", v);
  out.append(buf, res.ptr);
}

const char kHex[] = "0123456789abcdef";

void append_unicode_escape(std::string& out, unsigned code) {
  out += "\\u";
  out += kHex[(code >> 12) & 0xF];
  out += kHex[(code >> 8) & 0xF];
  out += kHex[(code >> 4) & 0xF];
  out += kHex[code & 0xF];
}

// Length of the well-formed UTF-8 sequence starting at s[i] (a non-ASCII lead byte), or 0 if the
// bytes there are not valid UTF-8 (overlong forms, surrogates and values above U+10FFFF included).
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return len;
}

void append_metadata(TraceText& text, const char* name, int32_t pid, StreamId tid, const char* arg_key,
                     std::string_view string_value, int64_t int_value, bool is_string) {
  text.begin_event();
  std::string& out = text.buf();
  out += "{\"ph\":\"M\",\"pid\":";
  append_int(out, pid);
  out += ",\"tid\":";
  append_int(out, tid);
  out += ",\"name\":\"";
  out += name;
  out += "\",\"args\":{\"";
  out += arg_key;
  out += "\":";
  if (is_string)
    append_json_string(out, string_value);
  else
    append_int(out, int_value);
  out += "}}";
}

void append_args(std::string& out, const TaskSpec& spec) {
  const double flops = spec.flops.count();
  const int64_t bytes = spec.bytes.count();
  if (flops == 0.0 && bytes == 0 && spec.microbatch < 0 && spec.layer < 0) return;
  out += ",\"args\":{";
  bool first = true;
  const auto key = [&](const char* k) {
    if (!first) out += ',';
    first = false;
    out += '"';
    out += k;
    out += "\":";
  };
  if (flops != 0.0) {
    key("flops");
    append_double(out, flops);
  }
  if (bytes != 0) {
    key("bytes");
    append_int(out, bytes);
  }
  if (spec.microbatch >= 0) {
    key("microbatch");
    append_int(out, spec.microbatch);
  }
  if (spec.layer >= 0) {
    key("layer");
    append_int(out, spec.layer);
  }
  out += '}';
}

// "network[ (first N of M flows)]; utilization of the K busiest of L links".
std::string network_name(size_t shown, size_t flows, size_t links) {
  std::string name = "network";
  if (shown < flows) name += " (first " + std::to_string(shown) + " of " + std::to_string(flows) + " flows)";
  name += "; utilization counters: the ";
  name += std::to_string(std::min(links, ChromeTraceRecorder::kMaxTraceLinks));
  name += " busiest of " + std::to_string(links) + " links";
  return name;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    // Copy the longest run of characters that need no escaping in one go.
    size_t j = i;
    while (j < s.size()) {
      const auto c = static_cast<unsigned char>(s[j]);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++j;
    }
    out.append(s.data() + i, j - i);
    i = j;
    if (i == s.size()) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t len = utf8_sequence_length(s, i);
      if (len == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(s.data() + i, len);
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: append_unicode_escape(out, c); break;
    }
    ++i;
  }
  out += '"';
}

void append_micros(std::string& out, int64_t ns) {
  // Unsigned magnitude, so INT64_MIN does not overflow.
  uint64_t mag = static_cast<uint64_t>(ns);
  if (ns < 0) {
    out += '-';
    mag = 0 - mag;
  }
  append_int(out, mag / 1000);
  const auto frac = static_cast<unsigned>(mag % 1000);
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  out.append(digits, 4);
}

ChromeTraceRecorder::ChromeTraceRecorder(sim::Engine& engine, const sim::task::TaskGraph& graph) : graph_(graph) {
  engine.signals().on_task_start.connect([this](TaskIndex i, sim::Time t) { on_start(i, t); });
  engine.signals().on_task_end.connect([this](TaskIndex i, sim::Time t) { on_end(i, t); });
}

void ChromeTraceRecorder::on_start(TaskIndex i, sim::Time t) {
  if (i >= start_ns_.size()) {
    // The graph may have been built after the recorder; it is finalized by the time tasks run.
    TRAINSIM_ASSERT(i < graph_.size(), "trace: task ", i, " is not in the recorded graph");
    start_ns_.resize(graph_.size(), kNotSeen);
    end_ns_.resize(graph_.size(), kNotSeen);
  }
  if (end_ns_[i] != kNotSeen) {  // the graph runs again: the latest run wins
    end_ns_[i] = kNotSeen;
    --finished_;
  }
  start_ns_[i] = t.count_ns();
}

void ChromeTraceRecorder::on_end(TaskIndex i, sim::Time t) {
  // A task that ends without a recorded start (recorder attached mid-run) cannot be drawn.
  if (i >= start_ns_.size() || start_ns_[i] == kNotSeen || end_ns_[i] != kNotSeen) return;
  end_ns_[i] = t.count_ns();
  ++finished_;
}

void ChromeTraceRecorder::write(std::ostream& os) const {
  TraceText text(os);
  std::string& out = text.buf();
  out += "{\"schema_version\":1,\"displayTimeUnit\":\"ns\",\"traceEvents\":[";

  // Streams in (rank, stream id) order: pid/tid order of the events.
  std::vector<StreamId> streams(graph_.stream_count());
  for (size_t s = 0; s < streams.size(); ++s) streams[s] = static_cast<StreamId>(s);
  std::stable_sort(streams.begin(), streams.end(),
                   [&](StreamId a, StreamId b) { return graph_.stream(a).rank < graph_.stream(b).rank; });

  // Metadata: one process per rank, one thread per stream.
  for (size_t k = 0; k < streams.size(); ++k) {
    const sim::task::StreamInfo& info = graph_.stream(streams[k]);
    if (k == 0 || graph_.stream(streams[k - 1]).rank != info.rank) {
      append_metadata(text, "process_name", info.rank, 0, "name", "rank " + std::to_string(info.rank), 0, true);
      append_metadata(text, "process_sort_index", info.rank, 0, "sort_index", {}, info.rank, false);
    }
    append_metadata(text, "thread_name", info.rank, streams[k], "name", graph_.label(info.label), 0, true);
    append_metadata(text, "thread_sort_index", info.rank, streams[k], "sort_index", {}, streams[k], false);
  }

  // Complete events, per stream sorted by (start, task index).
  std::vector<std::pair<int64_t, TaskIndex>> order;
  for (const StreamId s : streams) {
    const sim::task::StreamInfo& info = graph_.stream(s);
    order.clear();
    for (const TaskIndex i : graph_.stream_tasks(s))
      if (i < end_ns_.size() && end_ns_[i] != kNotSeen) order.emplace_back(start_ns_[i], i);
    std::sort(order.begin(), order.end());
    for (const auto& [start, i] : order) {
      const TaskSpec& spec = graph_.task(i).spec;
      text.begin_event();
      out += "{\"ph\":\"X\",\"pid\":";
      append_int(out, info.rank);
      out += ",\"tid\":";
      append_int(out, s);
      out += ",\"ts\":";
      append_micros(out, start);
      out += ",\"dur\":";
      append_micros(out, end_ns_[i] - start);
      out += ",\"name\":";
      append_json_string(out, graph_.display_name(i));
      out += ",\"cat\":\"";
      out += sim::task::to_string(spec.kind);
      out += '"';
      append_args(out, spec);
      out += '}';
      text.maybe_flush();
    }
  }
  append_memory_counters(text);
  append_p2p_flows(text);
  if (flows_ != nullptr) append_flows(text);
  out += "\n]}\n";
  text.flush();
}

void ChromeTraceRecorder::append_flows(TraceText& text) const {
  // One process "network" after the ranks; a thread per link a flow starts on (named by the
  // link), its flows as complete events from start (latency phase) to the last byte.
  std::string& out = text.buf();
  int32_t pid = 0;
  for (size_t s = 0; s < graph_.stream_count(); ++s)
    pid = std::max(pid, graph_.stream(static_cast<StreamId>(s)).rank + 1);
  const auto& spans = flows_->flows();
  const size_t shown = std::min(spans.size(), kMaxTraceFlows);
  append_metadata(text, "process_name", pid, 0, "name", network_name(shown, spans.size(), flows_->link_count()), 0,
                  true);
  append_metadata(text, "process_sort_index", pid, 0, "sort_index", {}, pid, false);
  append_link_counters(text, pid);
  std::vector<std::pair<uint32_t, size_t>> order;  // (thread = first link, flow)
  for (size_t f = 0; f < shown; ++f)
    if (spans[f].end_ns >= 0) order.emplace_back(spans[f].first_link, f);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& [link, f] = order[k];
    if (k == 0 || order[k - 1].first != link) {
      append_metadata(text, "thread_name", pid, link, "name", flows_->link_labels()[link], 0, true);
      append_metadata(text, "thread_sort_index", pid, link, "sort_index", {}, link, false);
    }
    const auto& sp = spans[f];
    text.begin_event();
    out += "{\"ph\":\"X\",\"pid\":";
    append_int(out, pid);
    out += ",\"tid\":";
    append_int(out, link);
    out += ",\"ts\":";
    append_micros(out, sp.start_ns);
    out += ",\"dur\":";
    append_micros(out, sp.end_ns - sp.start_ns);
    out += ",\"name\":";
    append_json_string(out, "flow to " + flows_->link_labels()[sp.last_link]);
    out += ",\"cat\":\"flow\",\"args\":{\"bytes\":";
    append_int(out, sp.bytes);
    out += ",\"links\":";
    append_int(out, sp.links);
    out += "}}";
    text.maybe_flush();
  }
}

int64_t ChromeTraceRecorder::last_end_ns() const {
  int64_t end = 0;
  for (const int64_t e : end_ns_) end = std::max(end, e);
  return end;
}

namespace {
// {"ph":"C","pid":P,"tid":0,"ts":T,"name":NAME,"args":{ — the caller appends the args and "}}".
void begin_counter(TraceText& text, int32_t pid, int64_t ts_ns, std::string_view name) {
  text.begin_event();
  std::string& out = text.buf();
  out += "{\"ph\":\"C\",\"pid\":";
  append_int(out, pid);
  out += ",\"tid\":0,\"ts\":";
  append_micros(out, ts_ns);
  out += ",\"name\":";
  append_json_string(out, name);
  out += ",\"args\":{";
}
}  // namespace

void ChromeTraceRecorder::append_memory_counters(TraceText& text) const {
  if (memory_events_ == nullptr) return;
  std::string& out = text.buf();
  // Per slot: (time, event index, delta) in time order; equal times are merged into one point.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> changes(memory_slots_.size());
  for (const auto& ev : *memory_events_) {
    if (ev.slot >= memory_slots_.size() || ev.task >= end_ns_.size()) continue;
    const int64_t t = ev.at_start ? start_ns_[ev.task] : end_ns_[ev.task];
    if (t == kNotSeen) continue;
    changes[ev.slot].emplace_back(t, ev.at_start ? ev.bytes : -ev.bytes);
  }
  const int64_t end = last_end_ns();
  for (size_t slot = 0; slot < memory_slots_.size(); ++slot) {
    auto& ch = changes[slot];
    std::stable_sort(ch.begin(), ch.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    const MemorySlot& m = memory_slots_[slot];
    int64_t used = m.static_bytes;
    const auto point = [&](int64_t t) {
      begin_counter(text, m.rank, t, "memory");
      out += "\"used_bytes\":";
      append_int(out, used);
      out += ",\"capacity_bytes\":";
      append_int(out, m.capacity_bytes);
      out += "}}";
      text.maybe_flush();
    };
    if (ch.empty() || ch.front().first > 0) point(0);
    for (size_t k = 0; k < ch.size(); ++k) {
      used += ch[k].second;
      if (k + 1 < ch.size() && ch[k + 1].first == ch[k].first) continue;
      point(ch[k].first);
    }
    if (ch.empty() || ch.back().first < end) point(end);
  }
}

void ChromeTraceRecorder::append_p2p_flows(TraceText& text) const {
  if (!graph_.finalized()) return;
  std::string& out = text.buf();
  uint64_t id = 0;
  const auto flow_event = [&](char ph, int32_t pid, StreamId tid, int64_t ts) {
    text.begin_event();
    out += "{\"ph\":\"";
    out += ph;
    out += "\",\"pid\":";
    append_int(out, pid);
    out += ",\"tid\":";
    append_int(out, tid);
    out += ",\"ts\":";
    append_micros(out, ts);
    out += ",\"id\":";
    append_int(out, id);
    out += ",\"name\":\"pp\",\"cat\":\"p2p\"";
    if (ph == 'f') out += ",\"bp\":\"e\"";
    out += '}';
  };
  for (TaskIndex i = 0; i < end_ns_.size(); ++i) {
    if (end_ns_[i] == kNotSeen || graph_.task(i).spec.kind != sim::task::TaskKind::kP2P) continue;
    const Task& task = graph_.task(i);
    if (task.n_streams == 0) continue;
    const StreamId from = graph_.streams_of(i)[0];
    const int32_t rank = graph_.stream(from).rank;
    for (const TaskIndex* j = graph_.successors_begin(i); j != graph_.successors_end(i); ++j) {
      if (*j >= end_ns_.size() || end_ns_[*j] == kNotSeen || graph_.task(*j).n_streams == 0) continue;
      const StreamId to = graph_.streams_of(*j)[0];
      if (graph_.stream(to).rank == rank) continue;
      ++id;
      // "s" at the send's start (inside its slice), "f" bound to the receiving task's slice.
      flow_event('s', rank, from, start_ns_[i]);
      flow_event('f', graph_.stream(to).rank, to, start_ns_[*j]);
      text.maybe_flush();
    }
  }
}

void ChromeTraceRecorder::append_link_counters(TraceText& text, int32_t pid) const {
  std::string& out = text.buf();
  const int64_t end = last_end_ns();
  std::vector<std::pair<double, size_t>> busiest;  // (-bytes, link)
  std::vector<std::vector<double>> bins(flows_->link_count());
  for (size_t l = 0; l < flows_->link_count(); ++l) {
    if (!flows_->link_used(l)) continue;
    bins[l] = flows_->link_bin_bytes(l, sim::Time::ns(end), kTraceLinkBins);
    double total = 0;
    for (const double b : bins[l]) total += b;
    if (total >= 0.5) busiest.emplace_back(-total, l);
  }
  std::sort(busiest.begin(), busiest.end());
  if (busiest.size() > kMaxTraceLinks) busiest.resize(kMaxTraceLinks);
  const double width_s = static_cast<double>(std::max<int64_t>(end, 1)) / kTraceLinkBins / 1e9;
  for (const auto& [neg, l] : busiest) {
    const double cap = flows_->link_capacity(l).bytes_per_second();
    std::string name = "link ";
    name += flows_->link_labels()[l];
    double last = -1;
    for (int32_t b = 0; b <= kTraceLinkBins; ++b) {
      double u = 0;
      if (b < kTraceLinkBins && cap > 0) u = std::round(bins[l][static_cast<size_t>(b)] / (cap * width_s) * 1e4) / 1e4;
      if (u == last && b < kTraceLinkBins) continue;  // only changes (and the final point)
      last = u;
      // Bin b starts at b * end / bins ns, rounded down to whole nanoseconds.
      begin_counter(text, pid, end / kTraceLinkBins * b + end % kTraceLinkBins * b / kTraceLinkBins, name);
      out += "\"utilization\":";
      append_double(out, u);
      out += "}}";
      text.maybe_flush();
    }
  }
}

void ChromeTraceRecorder::write_file(const std::string& path) const {
  const char* hint = "check that the directory exists and is writable";
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f.is_open()) throw ConfigError("--trace", "cannot write " + path, hint);
  write(f);
  f.flush();
  if (!f) throw ConfigError("--trace", "cannot write " + path, hint);
}

}  // namespace trainsim::traces
