// Checks a `trainsim ui --screenshot` image against the regions the app reported (--regions):
// the image has the asked size and is not blank, every view is there and drew more than its
// background, and each view shows its own marks: the schedule at least three task colours, the
// memory view the red capacity line, the topology view node colours, the plans and what-if
// panels text. Exit 0 when every check passes, 1 with one line per failure otherwise.
//   screenshot_check IMAGE.png REGIONS.json WIDTH HEIGHT [trace | kineto | racks]
// "trace": the image is of trainsim's trace file (no plans, no what-if); "kineto": of a PyTorch
// profiler trace (no memory counters, no link counters, communication as NCCL kernels); "racks":
// of a job on NVL72 racks that leaves part of its last rack idle (the topology view draws racks).
#include <stb_image.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

struct Image {
  int w = 0, h = 0;
  std::vector<unsigned char> px;  // RGBA
  unsigned rgb(int x, int y) const {
    const size_t i = (static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 4;
    return (unsigned{px[i]} << 16) | (unsigned{px[i + 1]} << 8) | px[i + 2];
  }
};

int failures = 0;
void fail(const std::string& what) {
  std::fprintf(stderr, "screenshot_check: %s\n", what.c_str());
  ++failures;
}

// Pixels of the region, below its top `skip` pixels (title bar, headings, legend), within `tol` of
// colour `c` in each channel.
size_t count_near(const Image& im, const nlohmann::json& r, unsigned c, int tol, int skip) {
  size_t n = 0;
  const int x0 = r["x"], y0 = r["y"].get<int>() + skip, x1 = x0 + r["w"].get<int>(),
            y1 = r["y"].get<int>() + r["h"].get<int>();
  for (int y = std::max(0, y0); y < std::min(im.h, y1); ++y)
    for (int x = std::max(0, x0); x < std::min(im.w, x1); ++x) {
      const unsigned p = im.rgb(x, y);
      bool near = true;
      for (int s = 0; s < 24; s += 8)
        near = near && std::abs(static_cast<int>((p >> s) & 0xff) - static_cast<int>((c >> s) & 0xff)) <= tol;
      n += near;
    }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: screenshot_check IMAGE.png REGIONS.json WIDTH HEIGHT [trace | kineto | racks]\n");
    return 2;
  }
  const std::string mode = argc > 5 ? argv[5] : "";
  const bool kineto = mode == "kineto";
  const bool trace = mode == "trace" || kineto;
  const bool racks = mode == "racks";
  Image im;
  int channels = 0;
  unsigned char* data = stbi_load(argv[1], &im.w, &im.h, &channels, 4);
  if (data == nullptr) {
    std::fprintf(stderr, "screenshot_check: cannot read %s\n", argv[1]);
    return 1;
  }
  im.px.assign(data, data + static_cast<size_t>(im.w) * static_cast<size_t>(im.h) * 4);
  stbi_image_free(data);
  if (im.w != std::atoi(argv[3]) || im.h != std::atoi(argv[4]))
    fail("image is " + std::to_string(im.w) + "x" + std::to_string(im.h) + ", asked " + argv[3] + "x" + argv[4]);

  std::ifstream in(argv[2]);
  const nlohmann::json regions = nlohmann::json::parse(in);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& r : regions.at("regions")) by_name[r.at("name").get<std::string>()] = r;

  // Not blank: many colours over the whole image.
  std::set<unsigned> all;
  for (int y = 0; y < im.h; y += 2)
    for (int x = 0; x < im.w; x += 2) all.insert(im.rgb(x, y) & 0xf0f0f0);
  if (all.size() < (kineto ? 15u : 40u)) fail("image looks blank: " + std::to_string(all.size()) + " colours");

  for (const char* name : {"Schedule", "Memory", "Topology", "What-if", "Plans"}) {
    const auto it = by_name.find(name);
    if (it == by_name.end()) {
      fail(std::string("no region \"") + name + "\"");
      continue;
    }
    const auto& r = it->second;
    if (r["w"].get<int>() < 100 || r["h"].get<int>() < 60) fail(std::string(name) + " region is too small");
    // Drew more than its background: several colours, and a share of pixels off the commonest one.
    std::map<unsigned, size_t> hist;
    size_t total = 0;
    for (int y = r["y"].get<int>() + 20; y < std::min(im.h, r["y"].get<int>() + r["h"].get<int>()); ++y)
      for (int x = r["x"].get<int>(); x < std::min(im.w, r["x"].get<int>() + r["w"].get<int>()); ++x) {
        ++hist[im.rgb(x, y)];
        ++total;
      }
    size_t top = 0;
    for (const auto& [c, n] : hist) top = std::max(top, n);
    const double drawn = total ? 1.0 - static_cast<double>(top) / static_cast<double>(total) : 0;
    // A trace has no job: the plans and what-if panels only say so.
    const bool text_only = (trace && (std::string(name) == "Plans" || std::string(name) == "What-if")) ||
                           (kineto && (std::string(name) == "Memory" || std::string(name) == "Topology"));
    if (!text_only && (hist.size() < 6 || drawn < 0.02))
      fail(std::string(name) + " looks empty: " + std::to_string(hist.size()) + " colours, " +
           std::to_string(static_cast<int>(100 * drawn)) + "% drawn");
  }
  auto expect = [&](const char* view, unsigned colour, size_t at_least, const char* what, int skip = 20, int tol = 6) {
    if (!by_name.count(view)) return;
    const size_t n = count_near(im, by_name[view], colour, tol, skip);
    if (n < at_least) fail(std::string(view) + ": " + what + " missing (" + std::to_string(n) + " pixels)");
  };
  // The timeline palette (traces/svg/timeline.cpp): forward, backward, TP communication, below
  // the title bar, the two heading lines and the legend (whose swatches are 144 pixels each).
  constexpr int kScheduleHeader = 100;
  // The Kineto example is one rank, four streams: a smaller chart.
  const size_t tasks_px = kineto ? 300 : 2000;
  expect("Schedule", 0x4e79a7, tasks_px, "forward tasks", kScheduleHeader);
  expect("Schedule", 0xf28e2b, tasks_px, "backward tasks", kScheduleHeader);
  if (!kineto) {
    expect("Schedule", 0xe15759, 1000, "TP communication", kScheduleHeader);
    expect("Memory", 0xff2828, 200, "the capacity line");
  }
  if (!trace) {
    expect("Topology", 0x76b900, 20, "GPU nodes");
    // The table's header row (ImGui's dark TableHeaderBg, 0.19 0.19 0.20): there only when the
    // planner's table is drawn, not its "planning..." or error line.
    expect("Plans", 0x303033, 2000, "the plans table", 20, 1);
  }
  if (racks) {
    // ui/views/topology_view.cpp: a rack's NVLink switch trays, and the GPUs the job leaves idle.
    expect("Topology", 0x4a3c68, 400, "the racks' NVLink switch trays", 20, 2);
    expect("Topology", 0x3a4a2c, 30, "the unused GPUs, dimmed", 20, 2);
  }
  if (failures == 0) std::printf("screenshot_check: %s passes (%zu colours)\n", argv[1], all.size());
  return failures == 0 ? 0 : 1;
}
