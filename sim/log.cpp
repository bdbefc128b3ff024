#include "sim/log.hpp"

#include <algorithm>
#include <cstdio>

#include "sim/config/schema.hpp"

namespace trainsim::sim::log {

namespace {
constexpr std::array<const char*, kCategories> kCategoryNames = {"builder", "network", "planner", "failure", "engine"};
constexpr std::array<const char*, 4> kLevelNames = {"off", "info", "debug", "trace"};

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }
}  // namespace

const char* name(Category c) { return kCategoryNames[static_cast<size_t>(c)]; }
const char* name(Level l) { return kLevelNames[static_cast<size_t>(l)]; }

std::vector<std::string> category_names() { return {kCategoryNames.begin(), kCategoryNames.end()}; }
std::vector<std::string> level_names() { return {kLevelNames.begin(), kLevelNames.end()}; }

Thresholds parse_spec(std::string_view spec, const std::string& source) {
  Thresholds t;
  t.fill(Level::kOff);
  std::vector<std::string> categories = category_names();
  categories.insert(categories.begin(), "all");
  const std::string valid_categories = config::join(categories);
  const std::string valid_levels = config::join(level_names());
  const std::string form =
      "write CATEGORY=LEVEL[,...] with a category among " + valid_categories + " and a level among " + valid_levels;
  size_t at = 0;
  while (at <= spec.size() && !spec.empty()) {
    const size_t comma = std::min(spec.find(',', at), spec.size());
    const std::string_view item = spec.substr(at, comma - at);
    at = comma + 1;
    const size_t eq = item.find('=');
    if (item.empty() || eq == std::string_view::npos)
      throw ConfigError(source, "expected CATEGORY=LEVEL, got " + in_quotes(item), form);
    const std::string category(item.substr(0, eq)), level(item.substr(eq + 1));
    const auto c = std::find(categories.begin(), categories.end(), category);
    if (c == categories.end()) {
      const std::string near = config::did_you_mean(category, categories);
      throw ConfigError(source, "unknown log category " + in_quotes(category),
                        (near.empty() ? "" : "did you mean " + near + "? ") + "categories: " + valid_categories);
    }
    const std::vector<std::string> levels = level_names();
    const auto l = std::find(levels.begin(), levels.end(), level);
    if (l == levels.end()) {
      const std::string near = config::did_you_mean(level, levels);
      throw ConfigError(source, "unknown log level " + in_quotes(level) + " for " + category,
                        (near.empty() ? "" : "did you mean " + near + "? ") + "levels: " + valid_levels);
    }
    const auto lv = static_cast<Level>(l - levels.begin());
    if (category == "all")
      t.fill(lv);
    else
      t[static_cast<size_t>(c - categories.begin() - 1)] = lv;
  }
  return t;
}

void configure(const Thresholds& t) {
  for (size_t i = 0; i < kCategories; ++i)
    detail::thresholds[i].store(static_cast<uint8_t>(t[i]), std::memory_order_relaxed);
}

Thresholds current() {
  Thresholds t;
  for (size_t i = 0; i < kCategories; ++i)
    t[i] = static_cast<Level>(detail::thresholds[i].load(std::memory_order_relaxed));
  return t;
}

namespace detail {
void write(Category c, Level l, const std::string& message) {
  std::string line;
  line.reserve(message.size() + 20);
  line += '[';
  line += name(c);
  line += ':';
  line += name(l);
  line += "] ";
  for (const char ch : message) line += (ch == '\n' || ch == '\r') ? ' ' : ch;
  line += '\n';
  // One fwrite per line: stdio locks the stream per call, so lines from threads never interleave.
  std::fwrite(line.data(), 1, line.size(), stderr);
}
}  // namespace detail

}  // namespace trainsim::sim::log
