// Trace readers: Chakra (chakra_jsonizer output, text) and Kineto (PyTorch profiler JSON), by
// FUZZ_KIND.
#include "fuzz_common.hpp"
#include "traces/chakra/trace.hpp"
#include "traces/kineto/trace.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expect_clean([&] {
    const std::string kind = FUZZ_KIND;
    if (kind == "chakra") {
      (void)traces::chakra::parse_rank_trace(fuzz::text_of(data, size), "fuzz.json");
    } else {
      (void)traces::parse_kineto_trace(fuzz::json_of(data, size), "fuzz.json");
    }
  });
  return 0;
}
