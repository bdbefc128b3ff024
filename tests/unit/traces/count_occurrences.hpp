#pragma once
// How many times `what` occurs in `s` (overlapping occurrences count): the SVG tests count
// elements and markers with it.

#include <cstddef>
#include <string>

namespace trainsim::traces::testing {

inline size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace trainsim::traces::testing
