# Generates a C++ source holding every preset JSON file as a string, so the `trainsim` binary
# carries its built-in presets wherever it runs. Invoked at build time by models/CMakeLists.txt:
#   cmake -DOUT=<file.cpp> -DROOT=<presets dir> -DFILES="gpus/a.json;models/b.json" -P embed_presets.cmake
string(REPLACE "|" ";" FILES "${FILES}")
set(body "// Generated from models/presets/*.json by embed_presets.cmake. Do not edit.\n#include \"models/presets/embedded.hpp\"\n\nnamespace trainsim::models::presets {\n\nconst std::vector<EmbeddedPreset>& embedded_presets() {\n  static const std::vector<EmbeddedPreset> all = {\n")
foreach(rel IN LISTS FILES)
  file(READ "${ROOT}/${rel}" content)
  get_filename_component(kind "${rel}" DIRECTORY)
  get_filename_component(name "${rel}" NAME_WLE)
  string(APPEND body "    {\"${kind}\", \"${name}\", R\"trainsim_json(${content})trainsim_json\"},\n")
endforeach()
string(APPEND body "  };\n  return all;\n}\n\n}  // namespace trainsim::models::presets\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
