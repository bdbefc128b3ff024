// Trace readers, by FUZZ_KIND: Chakra (chakra_jsonizer output, text), Kineto (PyTorch profiler
// JSON), and the viewer's trace-event reader (trainsim's own `--trace` output, or any Chrome /
// Perfetto trace), which `trainsim ui TRACE` loads.
#include "fuzz_common.hpp"
#include "traces/chakra/trace.hpp"
#include "traces/kineto/trace.hpp"
#include "ui/scene/trace_scene.hpp"

using namespace trainsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::expect_clean([&] {
    const std::string kind = FUZZ_KIND;
    if (kind == "chakra") {
      (void)traces::chakra::parse_rank_trace(fuzz::text_of(data, size), "fuzz.json");
    } else if (kind == "kineto") {
      (void)traces::parse_kineto_trace(fuzz::json_of(data, size), "fuzz.json");
    } else {
      (void)ui::trace_scene(fuzz::json_of(data, size), "fuzz.json");
    }
  });
  return 0;
}
