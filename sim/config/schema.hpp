#pragma once
// Schema-first configuration: one field table per config struct drives JSON parsing,
// validation (closed: unknown keys are errors with a did-you-mean), and generated docs.

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/error.hpp"
#include "sim/units.hpp"

namespace trainsim::sim::config {

using Json = nlohmann::json;

// Closest candidate by edit distance, or "" when nothing is close enough.
std::string did_you_mean(const std::string& key, const std::vector<std::string>& candidates);
// "a, b, c" for messages.
std::string join(const std::vector<std::string>& items, const char* sep = ", ");
std::string json_type_name(const Json& j);
// A value as error messages quote it: compact JSON, at most 40 characters, invalid UTF-8 replaced
// (a message never throws on what the user wrote).
std::string show(const Json& j);
// Integer fields whose maximum is at least this are "unbounded" in messages and docs.
inline constexpr int64_t kUnboundedInt = int64_t{1} << 40;
// "must be at least 1" or "must be between 1 and 8".
std::string range_text(int64_t min, int64_t max);
// Escapes '|' so that a text stays inside one Markdown table cell (types like "one of a|b").
std::string markdown_cell(const std::string& text);

// Typed readers: each throws ConfigError naming `path` with the fix.
int64_t read_int(const Json& j, const std::string& path, int64_t min, int64_t max);
double read_number(const Json& j, const std::string& path, double min, double max);
bool read_bool(const Json& j, const std::string& path);
std::string read_string(const Json& j, const std::string& path);
std::string read_enum(const Json& j, const std::string& path, const std::vector<std::string>& allowed);
// A set of names from `names` (at most 32), as a list ["a", "b"] or one string "a,b": bit i set
// for names[i]. Errors call an item a `noun` ("module") and show `example`.
uint32_t read_name_set(const Json& j, const std::string& path, const std::vector<std::string>& names,
                       const std::string& noun, const char* example);
// The set's names in the order of `names`, and as "a,b" (empty: "").
std::vector<std::string> name_set_items(uint32_t set, const std::vector<std::string>& names);
std::string name_set_string(uint32_t set, const std::vector<std::string>& names);
Bytes read_bytes(const Json& j, const std::string& path);
Bandwidth read_bandwidth(const Json& j, const std::string& path);
Time read_time(const Json& j, const std::string& path);
FlopRate read_flop_rate(const Json& j, const std::string& path);
// A preset's `sources`: an object mapping field names to where their values come from.
std::map<std::string, std::string> read_sources(const Json& j, const std::string& path);

template <typename T>
struct Field {
  std::string key;
  std::string type;      // for docs: "integer", "bandwidth", "one of a|b", ...
  std::string fallback;  // default as JSON text, applied when the key is absent and shown in docs
  bool required = false;
  std::string doc;
  std::function<void(T&, const Json&, const std::string&)> set;
  // The accepted range of an integer or number field (tests try both ends: tests/unit/planner/
  // extreme_values_test.cpp); none for other kinds.
  std::optional<std::pair<double, double>> range;
};

template <typename T>
class Schema {
 public:
  Schema(std::string name, std::string doc) : name_(std::move(name)), doc_(std::move(doc)) {}

  Schema& integer(std::string key, int64_t T::*m, int64_t min, int64_t max, std::optional<int64_t> def,
                  std::string doc) {
    return add(std::move(key),
               max >= kUnboundedInt ? "integer >= " + std::to_string(min)
                                    : "integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]",
               def ? std::to_string(*def) : "", !def, std::move(doc),
               [m, min, max](T& t, const Json& j, const std::string& p) { t.*m = read_int(j, p, min, max); })
        .ranged(min, max);
  }
  Schema& nullable_integer(std::string key, std::optional<int64_t> T::*m, int64_t min, int64_t max, std::string doc) {
    return add(std::move(key), "integer or null", "null", false, std::move(doc),
               [m, min, max](T& t, const Json& j, const std::string& p) {
                 if (j.is_null())
                   t.*m = std::nullopt;
                 else
                   t.*m = read_int(j, p, min, max);
               })
        .ranged(min, max);
  }
  Schema& number(std::string key, double T::*m, double min, double max, std::optional<double> def, std::string doc) {
    return add(std::move(key), "number", def ? Json(*def).dump() : "", !def, std::move(doc),
               [m, min, max](T& t, const Json& j, const std::string& p) { t.*m = read_number(j, p, min, max); })
        .ranged(min, max);
  }
  Schema& boolean(std::string key, bool T::*m, std::optional<bool> def, std::string doc) {
    return add(std::move(key), "boolean", def ? (*def ? "true" : "false") : "", !def, std::move(doc),
               [m](T& t, const Json& j, const std::string& p) { t.*m = read_bool(j, p); });
  }
  Schema& string(std::string key, std::string T::*m, std::optional<std::string> def, std::string doc) {
    return add(std::move(key), "string", def ? "\"" + *def + "\"" : "", !def, std::move(doc),
               [m](T& t, const Json& j, const std::string& p) { t.*m = read_string(j, p); });
  }
  Schema& enumeration(std::string key, std::string T::*m, std::vector<std::string> allowed,
                      std::optional<std::string> def, std::string doc) {
    const std::string type = "one of " + join(allowed, "|");
    return add(std::move(key), type, def ? "\"" + *def + "\"" : "", !def, std::move(doc),
               [m, allowed](T& t, const Json& j, const std::string& p) { t.*m = read_enum(j, p, allowed); });
  }
  // A closed set read into an enum (of T or of a base of T): `names` spell its values in enum
  // order; type, default and errors read as for a string enumeration.
  template <typename E, typename Base>
  requires std::is_enum_v<E> && std::is_base_of_v<Base, T> Schema& enumeration(std::string key, E Base::*m,
                                                                               std::vector<std::string> names, E def,
                                                                               std::string doc) {
    const std::string type = "one of " + join(names, "|");
    const std::string fallback = "\"" + names.at(static_cast<size_t>(def)) + "\"";
    return add(std::move(key), type, fallback, false, std::move(doc),
               [m, names](T& t, const Json& j, const std::string& p) {
                 const std::string v = read_enum(j, p, names);
                 t.*m = static_cast<E>(std::find(names.begin(), names.end(), v) - names.begin());
               });
  }
  template <typename U>
  Schema& unit(std::string key, U T::*m, U (*reader)(const Json&, const std::string&), std::string type,
               std::optional<std::string> def, std::string doc) {
    return add(std::move(key), std::move(type), def ? "\"" + *def + "\"" : "", !def, std::move(doc),
               [m, reader](T& t, const Json& j, const std::string& p) { t.*m = reader(j, p); });
  }
  // The `sources` object every preset carries (field name -> origin), described by `doc`.
  Schema& sources(std::map<std::string, std::string> T::*m,
                  std::string doc = "Where each constant comes from (field name -> source).") {
    return add("sources", "object", "{}", false, std::move(doc),
               [m](T& t, const Json& j, const std::string& p) { t.*m = read_sources(j, p); });
  }
  // Escape hatch for nested objects and lists: `set` parses the value itself.
  Schema& custom(std::string key, std::string type, std::optional<std::string> def, std::string doc,
                 std::function<void(T&, const Json&, const std::string&)> set) {
    return add(std::move(key), std::move(type), def.value_or(""), !def, std::move(doc), std::move(set));
  }

  // Parses `j` (an object) into `out`, which holds the defaults. Closed: unknown keys throw.
  void parse(const Json& j, const std::string& path, T& out) const {
    if (!j.is_object())
      throw ConfigError(path.empty() ? name_ : path, "expected a JSON object, got " + json_type_name(j));
    std::vector<std::string> keys;
    for (const auto& f : fields_) keys.push_back(f.key);
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool known = false;
      for (const auto& f : fields_) known = known || f.key == it.key();
      if (!known) {
        const std::string near = did_you_mean(it.key(), keys);
        throw ConfigError(child(path, it.key()), "unknown key in " + name_,
                          near.empty() ? "valid keys: " + join(keys) : "did you mean \"" + near + "\"?");
      }
    }
    for (const auto& f : fields_) {
      auto it = j.find(f.key);
      if (it == j.end()) {
        if (f.required)
          throw ConfigError(child(path, f.key), "missing required key", "add \"" + f.key + "\": " + f.type);
        // The documented default is the default: it goes through the same setter as user input.
        if (!f.fallback.empty()) f.set(out, Json::parse(f.fallback), child(path, f.key));
        continue;
      }
      f.set(out, *it, child(path, f.key));
    }
  }

  // Markdown table of the fields (docs/config-reference.md).
  std::string markdown() const {
    std::string out = "## " + name_ + "\n\n" + doc_ + "\n\n| key | type | default | description |\n|---|---|---|---|\n";
    for (const auto& f : fields_) {
      out += "| `" + f.key + "` | ";
      out += markdown_cell(f.type);
      if (f.required) {
        out += " | required | ";
      } else {
        out += " | `";
        out += markdown_cell(f.fallback);
        out += "` | ";
      }
      out += markdown_cell(f.doc);
      out += " |\n";
    }
    return out;
  }
  const std::string& name() const { return name_; }
  const std::vector<Field<T>>& fields() const { return fields_; }

 private:
  static std::string child(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  Schema& add(std::string key, std::string type, std::string fallback, bool required, std::string doc,
              std::function<void(T&, const Json&, const std::string&)> set) {
    fields_.push_back(Field<T>{std::move(key), std::move(type), std::move(fallback), required, std::move(doc),
                               std::move(set), std::nullopt});
    return *this;
  }
  Schema& ranged(double min, double max) {
    fields_.back().range = std::make_pair(min, max);
    return *this;
  }
  std::string name_, doc_;
  std::vector<Field<T>> fields_;
};

}  // namespace trainsim::sim::config
