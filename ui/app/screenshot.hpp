#pragma once
// `trainsim ui --screenshot FILE.png`: the back buffer as a PNG (stb_image_write, from Debian's
// libstb), and with `--regions FILE.json` each view's rectangle in the image's pixels, so a test
// can check that every view drew something.

#include <string>
#include <vector>

namespace trainsim::ui {

struct Region {
  std::string name;
  int x = 0, y = 0, w = 0, h = 0;  // top-left origin, pixels
};

// Reads the current framebuffer (width x height) and writes it; throws ConfigError at
// "--screenshot" when the file cannot be written.
void write_screenshot(const std::string& file, int width, int height);
// {"width":W,"height":H,"regions":[{"name":..,"x":..,"y":..,"w":..,"h":..},...]}; throws
// ConfigError at "--regions".
void write_regions(const std::string& file, int width, int height, const std::vector<Region>& regions);

}  // namespace trainsim::ui
