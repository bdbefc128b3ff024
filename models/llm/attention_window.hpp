#pragma once
// Sliding-window (local) attention on a per-layer pattern: the `attention_window` object of a model.
// Layer i (0-based) uses pattern[i % pattern.size()]: "local" attends to the last `size` positions
// (itself included), "global" to every earlier position. GPT-OSS alternates ["local", "global"]
// with size 128; Gemma 3 repeats five local layers (size 1024) and one global.
//
// Work of a local layer: query p attends min(p + 1, w) keys, so a causal sequence of s tokens has
// w(w+1)/2 + (s - w) w (query, key) pairs instead of about s^2/2. Chunked attention (Llama 4: the
// sequence cut into blocks of `size` that attend only inside their block) has w(w+1)/2 pairs per
// block, s(w+1)/2 in all, about half a sliding window's; it is modelled as a window of the same size,
// which overstates its work by at most 2x on its local layers.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/schema.hpp"

namespace trainsim::models::llm {

struct AttentionWindow {
  int64_t size = 0;                  // keys a local layer's query sees (itself included)
  std::vector<std::string> pattern;  // "local" | "global", repeated over the layers
  bool local(int64_t layer) const;   // whether layer `layer` (0-based) is local
};

// (query, key) pairs of causal attention over `seq` tokens, restricted to the last `window` keys
// (window >= seq: seq(seq+1)/2).
double windowed_causal_pairs(int64_t seq, int64_t window);

const sim::config::Schema<AttentionWindow>& attention_window_schema();

}  // namespace trainsim::models::llm
