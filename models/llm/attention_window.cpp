#include "models/llm/attention_window.hpp"

#include <algorithm>

namespace trainsim::models::llm {

bool AttentionWindow::local(int64_t layer) const {
  if (pattern.empty()) return false;
  return pattern[static_cast<size_t>(layer % static_cast<int64_t>(pattern.size()))] == "local";
}

double windowed_causal_pairs(int64_t seq, int64_t window) {
  const double w = static_cast<double>(std::min(seq, window)), s = static_cast<double>(seq);
  return w * (w + 1.0) / 2.0 + (s - w) * w;
}

const sim::config::Schema<AttentionWindow>& attention_window_schema() {
  static const sim::config::Schema<AttentionWindow> schema = [] {
    sim::config::Schema<AttentionWindow> s(
        "attention_window",
        "Sliding-window attention on a per-layer pattern (the `attention_window` object of a model): layer i "
        "uses pattern[i % length]; a local layer's query attends to the last `size` positions.");
    s.integer("size", &AttentionWindow::size, 1, sim::config::kUnboundedInt, std::nullopt,
              "Window of a local layer in tokens, itself included (GPT-OSS: 128, Gemma 3: 1024); at most seq_len.")
        .custom("pattern", "list of \"local\" | \"global\"", std::string("[\"local\"]"),
                "Layer kinds repeated over the layers from layer 0: [\"local\", \"global\"] alternates (GPT-OSS), "
                "five \"local\" then \"global\" is Gemma 3; [\"local\"] makes every layer local (Mistral 7B).",
                [](AttentionWindow& w, const sim::config::Json& j, const std::string& p) {
                  if (!j.is_array() || j.empty())
                    throw ConfigError(p, "expected a non-empty list of \"local\" | \"global\"",
                                      "write e.g. [\"local\", \"global\"]");
                  w.pattern.clear();
                  for (size_t i = 0; i < j.size(); ++i)
                    w.pattern.push_back(
                        sim::config::read_enum(j[i], p + "[" + std::to_string(i) + "]", {"local", "global"}));
                });
    return s;
  }();
  return schema;
}

}  // namespace trainsim::models::llm
