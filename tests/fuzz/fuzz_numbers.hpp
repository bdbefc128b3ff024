#pragma once
// The numbers the fuzz targets' mutator (fuzz_numbers.cpp) tries in numeric fields, and how it
// finds and replaces a number in an input. Header-only so that a unit test can check it without
// libFuzzer.
#include <cctype>
#include <cstddef>
#include <string>
#include <vector>

namespace trainsim::fuzz {

inline const std::vector<std::string>& extreme_numbers() {
  static const std::vector<std::string> values = {"0",
                                                  "-0",
                                                  "0.0",
                                                  "-1",
                                                  "1e-6",
                                                  "9.99e-7",
                                                  "1e-9",
                                                  "1e-45",
                                                  "1e-300",
                                                  "5e-324",
                                                  "2.2250738585072014e-308",
                                                  "1e19",
                                                  "1e300",
                                                  "1.7976931348623157e308",
                                                  "9223372036854775807",
                                                  "9223372036854775808",
                                                  "-9223372036854775808",
                                                  "4294967296",
                                                  "65536"};
  return values;
}

// A number starts at a digit that does not continue a word ("gpu0", "h100" are names, not numbers),
// with the sign before it, and runs over digits, '.', and an exponent.
inline bool number_starts(const std::string& s, size_t i) {
  if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  if (i == 0) return true;
  const char p = s[i - 1];
  return !(std::isalnum(static_cast<unsigned char>(p)) || p == '_' || p == '.');
}

inline size_t number_end(const std::string& s, size_t i) {
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      i = j;
    }
  }
  return i;
}

inline size_t count_numbers(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i)
    if (number_starts(s, i)) {
      ++n;
      i = number_end(s, i) - 1;
    }
  return n;
}

// `s` with its `pick`-th number (and the sign before it) replaced by `value`.
inline std::string replace_number(const std::string& s, size_t pick, const std::string& value) {
  for (size_t i = 0, n = 0; i < s.size(); ++i) {
    if (!number_starts(s, i)) continue;
    const size_t end = number_end(s, i);
    if (n++ == pick) {
      const size_t begin = i > 0 && (s[i - 1] == '-' || s[i - 1] == '+') ? i - 1 : i;
      return s.substr(0, begin) + value + s.substr(end);
    }
    i = end - 1;
  }
  return s;
}

}  // namespace trainsim::fuzz
