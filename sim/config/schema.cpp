#include "sim/config/schema.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

namespace trainsim::sim::config {

namespace {
size_t edit_distance(const std::string& a, const std::string& b) {
  // Through unsigned char: std::tolower of a negative char (a UTF-8 byte) is undefined behaviour.
  const auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string show(const Json& j) {
  std::string s = j.dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

std::string did_you_mean(const std::string& key, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::numeric_limits<size_t>::max();
  for (const auto& c : candidates) {
    const size_t d = edit_distance(key, c);
    if (d < best_d) best_d = d, best = c;
  }
  // A candidate the key begins (h100 -> h100-sxm-80gb) is the likeliest intent; otherwise accept
  // up to a third of the longer name in edits (at least 2), or a key that extends a candidate.
  if (key.size() >= 2)
    for (const auto& c : candidates)
      if (c.rfind(key, 0) == 0) return c;
  const size_t limit = std::max<size_t>(2, std::max(key.size(), best.size()) / 3);
  if (best_d <= limit) return best;
  for (const auto& c : candidates)
    if (!key.empty() && key.rfind(c, 0) == 0) return c;
  return "";
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string json_type_name(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    case Json::value_t::string: return "a string";
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    default: return "an unsupported value";
  }
}

std::string range_text(int64_t min, int64_t max) {
  // Limits that only guard against overflow are not worth printing.
  if (max >= kUnboundedInt) return "must be at least " + std::to_string(min);
  return "must be between " + std::to_string(min) + " and " + std::to_string(max);
}

int64_t read_int(const Json& j, const std::string& path, int64_t min, int64_t max) {
  int64_t v;
  if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    // Above INT64_MAX: get<int64_t>() would wrap to a negative number and could pass the range check.
    throw ConfigError(path, range_text(min, max) + ", got " + std::to_string(j.get<uint64_t>()));
  } else if (j.is_number_integer()) {
    v = j.get<int64_t>();
  } else if (j.is_number_float() && std::floor(j.get<double>()) == j.get<double>() &&
             std::abs(j.get<double>()) < 9e15) {
    v = static_cast<int64_t>(j.get<double>());
  } else {
    throw ConfigError(path, "expected an integer, got " + show(j),
                      "write a whole number such as " + std::to_string(std::max<int64_t>(min, 1)));
  }
  if (v < min || (v > max && max < kUnboundedInt))
    throw ConfigError(path, range_text(min, max) + ", got " + std::to_string(v));
  if (v > max)  // past a bound that only guards against overflow
    throw ConfigError(path, "must be at most " + std::to_string(max) + ", got " + std::to_string(v));
  return v;
}

double read_number(const Json& j, const std::string& path, double min, double max) {
  if (!j.is_number()) throw ConfigError(path, "expected a number, got " + show(j));
  const double v = j.get<double>();
  if (!(v >= min && v <= max))
    throw ConfigError(path, "must be between " + Json(min).dump() + " and " + Json(max).dump() + ", got " + show(j));
  return v;
}

bool read_bool(const Json& j, const std::string& path) {
  if (!j.is_boolean()) throw ConfigError(path, "expected true or false, got " + show(j));
  return j.get<bool>();
}

std::string read_string(const Json& j, const std::string& path) {
  if (!j.is_string()) throw ConfigError(path, "expected a string, got " + show(j));
  return j.get<std::string>();
}

std::map<std::string, std::string> read_sources(const Json& j, const std::string& path) {
  if (!j.is_object()) throw ConfigError(path, "expected an object mapping field names to sources");
  std::map<std::string, std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = read_string(*it, path + "." + it.key());
  return out;
}

std::string read_enum(const Json& j, const std::string& path, const std::vector<std::string>& allowed) {
  if (!j.is_string()) throw ConfigError(path, "expected one of " + join(allowed, "|") + ", got " + show(j));
  const std::string v = j.get<std::string>();
  if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
  const std::string near = did_you_mean(v, allowed);
  throw ConfigError(path, "unknown value \"" + v + "\"",
                    near.empty() ? "expected one of " + join(allowed, "|") : "did you mean \"" + near + "\"?");
}

uint32_t read_name_set(const Json& j, const std::string& path, const std::vector<std::string>& names,
                       const std::string& noun, const char* example) {
  std::vector<std::string> items;
  if (j.is_array()) {
    for (const auto& e : j) {
      if (!e.is_string())
        throw ConfigError(path, "expected " + noun + " names (strings), got " + show(e),
                          std::string("e.g. ") + example);
      items.push_back(e.get<std::string>());
    }
  } else if (j.is_string()) {
    const std::string text = j.get<std::string>();
    size_t start = 0;
    while (start < text.size()) {
      const size_t comma = std::min(text.find(',', start), text.size());
      items.push_back(text.substr(start, comma - start));
      start = comma + 1;
    }
  } else {
    throw ConfigError(path, "expected a list of " + noun + " names or \"a,b,...\", got " + show(j),
                      std::string("e.g. ") + example);
  }
  uint32_t out = 0;
  for (const std::string& item : items) {
    const auto it = std::find(names.begin(), names.end(), item);
    if (it == names.end()) {
      const std::string near = did_you_mean(item, names);
      throw ConfigError(path, "unknown " + noun + " \"" + item + "\"",
                        near.empty() ? "expected some of " + join(names, "|") : "did you mean \"" + near + "\"?");
    }
    out |= 1u << static_cast<uint32_t>(it - names.begin());
  }
  return out;
}

std::vector<std::string> name_set_items(uint32_t set, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (size_t i = 0; i < names.size(); ++i)
    if (set & (1u << i)) out.push_back(names[i]);
  return out;
}

std::string name_set_string(uint32_t set, const std::vector<std::string>& names) {
  return join(name_set_items(set, names), ",");
}

namespace {
std::string unit_text(const Json& j, const std::string& path, const char* example) {
  if (j.is_number())
    throw ConfigError(path, std::string("expected a string like \"") + example + "\", got " + show(j), "add a unit");
  if (!j.is_string())
    throw ConfigError(path, std::string("expected a string like \"") + example + "\", got " + show(j));
  return j.get<std::string>();
}
}  // namespace

Bytes read_bytes(const Json& j, const std::string& path) { return parse_bytes(unit_text(j, path, "80GiB"), path); }
Bandwidth read_bandwidth(const Json& j, const std::string& path) {
  return parse_bandwidth(unit_text(j, path, "400Gbps"), path);
}
Time read_time(const Json& j, const std::string& path) { return parse_time(unit_text(j, path, "2us"), path); }
FlopRate read_flop_rate(const Json& j, const std::string& path) {
  return parse_flop_rate(unit_text(j, path, "989TFLOPS"), path);
}

}  // namespace trainsim::sim::config
