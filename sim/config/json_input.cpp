#include "sim/config/json_input.hpp"

#include <fstream>

#include "sim/error.hpp"

namespace trainsim::sim::config {

std::string read_input_file(const std::string& file, const std::string& path) {
  std::ifstream in(file, std::ios::binary);
  const std::string named = path == file ? "" : "\"" + file + "\": ";
  if (!in)
    throw ConfigError(path, path == file ? "cannot read the file" : "cannot read file \"" + file + "\"",
                      "check the path");
  std::string out;
  std::string buf(size_t{1} << 20, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<size_t>(in.gcount());
    if (out.size() + got > kMaxInputBytes)
      throw ConfigError(path, named + "larger than the 1 GiB input limit", "give a regular JSON file below 1 GiB");
    out.append(buf.data(), got);
  }
  if (in.bad()) throw ConfigError(path, named + "reading the file failed", "check the file");
  return out;
}

namespace {
// "text", or "LABEL: text" when the input is a file named apart from its path.
std::string about(const std::string& label, const std::string& text) {
  return label.empty() ? text : label + ": " + text;
}
std::string invalid(const std::string& label) {
  return label.empty() ? "not valid JSON: " : label + " is not valid JSON: ";
}
}  // namespace

void check_json_depth(const std::string& text, const std::string& path, const std::string& label) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw ConfigError(path,
                          about(label, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels at byte " +
                                           std::to_string(i)),
                          "no trainsim input nests that deep: check the file");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

Json parse_json(const std::string& text, const std::string& path, const std::string& label) {
  check_json_depth(text, path, label);
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    std::string what = e.what();
    const auto pos = what.find("parse error");
    throw ConfigError(path, invalid(label) + (pos == std::string::npos ? what : what.substr(pos)));
  } catch (const Json::out_of_range& e) {  // a number beyond a double (1e400)
    std::string what = e.what();
    const auto pos = what.find("number overflow");
    throw ConfigError(path, about(label, pos == std::string::npos ? what : what.substr(pos)),
                      "numbers must fit a double (at most about 1.8e308)");
  } catch (const Json::exception& e) {
    const std::string what = e.what();
    const auto text = what.find("] ");  // without the library's "[json.exception.x.n] "
    throw ConfigError(path, invalid(label) + (text == std::string::npos ? what : what.substr(text + 2)));
  }
}

}  // namespace trainsim::sim::config
