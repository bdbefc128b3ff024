// The command line: the input's parts, split at NUL bytes and newlines (so tests/errors/*.args are
// seeds as they are), are argv[1..], through parse_args.
#include <vector>

#include "fuzz_common.hpp"
#include "planner/cli/args.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> parts(1, "trainsim");
  std::string cur;
  for (size_t i = 0; i < size && parts.size() < 64; ++i) {
    if (data[i] == 0 || data[i] == '\n') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  parts.push_back(cur);
  std::vector<const char*> argv;
  for (const auto& p : parts) argv.push_back(p.c_str());
  fuzz::expect_clean([&] { (void)planner::cli::parse_args(static_cast<int>(argv.size()), argv.data()); });
  return 0;
}
