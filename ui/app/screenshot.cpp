#include "ui/app/screenshot.hpp"

#include <GLFW/glfw3.h>
#include <stb_image_write.h>

#include <fstream>
#include <vector>

#include "sim/config/schema.hpp"
#include "sim/error.hpp"

namespace trainsim::ui {

void write_screenshot(const std::string& file, int width, int height) {
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * static_cast<size_t>(height) * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  // OpenGL's rows run bottom-up; PNG's top-down.
  stbi_flip_vertically_on_write(1);
  if (stbi_write_png(file.c_str(), width, height, 4, pixels.data(), width * 4) == 0)
    throw ConfigError("--screenshot", "cannot write \"" + file + "\"", "check that the folder exists and is writable");
}

void write_regions(const std::string& file, int width, int height, const std::vector<Region>& regions) {
  sim::config::Json j = {{"width", width}, {"height", height}, {"regions", sim::config::Json::array()}};
  for (const Region& r : regions)
    j["regions"].push_back({{"name", r.name}, {"x", r.x}, {"y", r.y}, {"w", r.w}, {"h", r.h}});
  std::ofstream out(file);
  out << j.dump(1) << "\n";
  if (!out)
    throw ConfigError("--regions", "cannot write \"" + file + "\"", "check that the folder exists and is writable");
}

}  // namespace trainsim::ui
