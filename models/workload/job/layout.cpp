#include "models/workload/job/layout.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>

#include "sim/error.hpp"

namespace trainsim::models::workload {

std::vector<int64_t> uneven_layout(int64_t layers, int64_t vstages) {
  if (vstages <= 1 || layers % vstages == 0) return {};
  // Every middle stage takes ceil(layers / vstages); the first and last share the deficit.
  const int64_t base = (layers + vstages - 1) / vstages;
  const int64_t deficit = base * vstages - layers;
  const int64_t first = base - (deficit + 1) / 2, last = base - deficit / 2;
  if (first < 1 || last < 1) return {};
  std::vector<int64_t> out(static_cast<size_t>(vstages), base);
  out.front() = first;
  out.back() = last;
  return out;
}

// pp_layout: a list of layer counts, or the same as text "a,b,..." (as the command line gives it),
// where "bxk" stands for k entries of b (the way reports print layouts: 7,8x14,7).
std::vector<int64_t> read_pp_layout(const sim::config::Json& v, const std::string& p) {
  using sim::config::Json;
  std::vector<int64_t> out;
  if (v.is_null()) return out;
  std::vector<Json> items;
  if (v.is_array()) {
    for (const auto& e : v) items.push_back(e);
  } else if (v.is_string() || v.is_number_integer()) {
    std::string text = v.is_string() ? v.get<std::string>() : std::to_string(v.get<int64_t>());
    size_t start = 0;
    while (start <= text.size()) {
      const size_t comma = std::min(text.find(',', start), text.size());
      const std::string item = text.substr(start, comma - start);
      // "8x14": 14 virtual stages of 8 layers each, as reports print layouts.
      const size_t x = item.find('x');
      char* end = nullptr;
      const std::string count = item.substr(0, x);  // `end` points into it: it must outlive the check
      const long long n = std::strtoll(count.c_str(), &end, 10);
      bool ok = !item.empty() && x != 0 && *end == '\0';
      long long repeat = 1;
      if (ok && x != std::string::npos) {
        const std::string times = item.substr(x + 1);
        repeat = std::strtoll(times.c_str(), &end, 10);
        ok = !times.empty() && *end == '\0' && repeat >= 1 && repeat <= 65536;
      }
      if (!ok)
        throw ConfigError(p, "\"" + text + "\" is not a comma-separated list of layer counts",
                          "write it like 7,8,8,7 or 7,8x2,7");
      for (long long r = 0; r < repeat; ++r) items.push_back(Json(n));
      start = comma + 1;
    }
  } else {
    throw ConfigError(p, "expected a list of layer counts, got " + sim::config::json_type_name(v),
                      "write it like [7, 8, 8, 7] or \"7,8,8,7\"");
  }
  for (size_t i = 0; i < items.size(); ++i)
    out.push_back(sim::config::read_int(items[i], p + "[" + std::to_string(i) + "]", 0, sim::config::kUnboundedInt));
  return out;
}

}  // namespace trainsim::models::workload
