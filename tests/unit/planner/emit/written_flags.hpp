#pragma once
// What an emitted file writes, as the names of planner/emit/flags/*.json: each written flag or
// key with the framework whose flag set must hold it. Used by flags_test.cpp.
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim::planner::emit::testing {

struct Written {
  std::string framework;  // which flag set: "megatron-lm", "slurm", "deepspeed", ...
  std::string flag;       // as the set spells it: "--seq-length", "zero_optimization.stage", ...
};

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

inline std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, s.find_last_not_of(' ') - a + 1);
}

// The words of a shell line up to a comment, and option names without their "=value".
inline std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) {
    if (w[0] == '#') break;
    out.push_back(w);
  }
  return out;
}
inline std::string option_name(const std::string& w) { return w.substr(0, w.find('=')); }

// A bash script: `--flags` inside arrays (NAME=( ... )) belong to `array_framework`; `#SBATCH`
// options and srun's options to "slurm" (sbatch:/srun:), the `deepspeed` launcher's to
// "deepspeed" (launcher:). torchrun's options are not checked (no flag set).
inline std::vector<Written> shell_flags(const std::string& text, const std::string& array_framework) {
  std::vector<Written> out;
  bool in_array = false;
  for (const std::string& raw : lines_of(text)) {
    const std::string line = trim(raw);
    if (line.rfind("#SBATCH ", 0) == 0) {
      out.push_back({"slurm", "sbatch:" + option_name(words(line.substr(8)).at(0))});
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    if (!in_array && line.size() > 2 && line.substr(line.size() - 2) == "=(") {
      in_array = true;
      continue;
    }
    if (in_array && line == ")") {
      in_array = false;
      continue;
    }
    const auto w = words(line);
    if (in_array) {
      for (const auto& x : w)
        if (x.rfind("--", 0) == 0) out.push_back({array_framework, x});
    } else if (!w.empty() && w[0] == "srun") {
      for (size_t i = 1; i < w.size() && w[i].rfind("--", 0) == 0; ++i)
        out.push_back({"slurm", "srun:" + option_name(w[i])});
    } else if (w.size() > 1 && w[0] == "exec" && w[1] == "deepspeed") {
      for (const auto& x : w)
        if (x.rfind("--", 0) == 0) out.push_back({"deepspeed", "launcher:" + option_name(x)});
    }
  }
  return out;
}

// ds_config.json: every key as a dotted path ("zero_optimization.offload_optimizer.device").
inline void json_keys(const nlohmann::ordered_json& j, const std::string& prefix, std::vector<Written>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    out.push_back({"deepspeed", path});
    if (it.value().is_object()) json_keys(it.value(), path, out);
  }
}

// TOML: "section" for each [section], "section.key" for each key (multi-line arrays skipped), and
// "converter:NAME" for each model converter named in `converters = [...]`.
inline std::vector<Written> toml_keys(const std::string& text) {
  static const std::regex section(R"(^\[([A-Za-z0-9_.]+)\]\s*(#.*)?$)"), key(R"(^([A-Za-z0-9_]+) = )"),
      quoted(R"xx("([^"]*)")xx");
  std::vector<Written> out;
  std::string current;
  std::smatch m;
  for (const std::string& line : lines_of(text)) {
    if (std::regex_search(line, m, section)) {
      current = m[1];
      out.push_back({"torchtitan", current});
    } else if (std::regex_search(line, m, key)) {
      out.push_back({"torchtitan", current + "." + std::string(m[1])});
      if (m[1] == "converters")
        for (std::sregex_iterator it(line.begin(), line.end(), quoted), end; it != end; ++it)
          out.push_back({"torchtitan", "converter:" + (*it)[1].str()});
    }
  }
  return out;
}

// The NeMo object an attribute path set in nemo_recipe.py lands on ("" for Lightning's Trainer
// arguments, which are not extracted).
inline std::string nemo_object(const std::string& lhs, std::string& field) {
  static const std::vector<std::pair<std::string, std::string>> roots = {
      {"recipe.trainer.strategy.", "MegatronStrategy"},
      {"strategy.", "MegatronStrategy"},
      {"recipe.model.config.", "GPTConfig"},
      {"recipe.optim.config.", "OptimizerConfig"},
      {"recipe.data.", "MockDataModule"},
      {"recipe.trainer.plugins.", "MegatronMixedPrecision"},
      {"recipe.trainer.", ""},
      {"recipe.", "pretrain"},
  };
  for (const auto& [prefix, object] : roots)
    if (lhs.rfind(prefix, 0) == 0) {
      field = lhs.substr(prefix.size());
      return object;
    }
  field = lhs;
  return "?";
}

// nemo_recipe.py: Object.field for every attribute set in trainsim_recipe() and every keyword of
// a run.Config(Class, ...) block; recipes.<module>, mixed_precision.<factory>, AttnBackend.<x>.
inline std::vector<Written> nemo_keys(const std::string& text) {
  static const std::regex recipe(R"(^recipe = llm\.(\w+)\.pretrain_recipe\()"), assign(R"(^([\w.]+) = (.*)$)"),
      kwarg(R"(^(\w+)=(.*?),?$)"), factory(R"(^(\w+)\(\)$)"), backend(R"(^AttnBackend\.(\w+))");
  std::vector<Written> out;
  auto add = [&](const std::string& object, const std::string& field) {
    out.push_back({"nemo", object + "." + field});
  };
  std::vector<std::string> classes;  // open run.Config blocks
  bool body = false, want_class = false;
  std::smatch m;
  for (const std::string& raw : lines_of(text)) {
    std::string line = trim(raw);
    if (line.rfind("def trainsim_recipe", 0) == 0) body = true;
    if (!body || line.empty() || line[0] == '#') continue;
    if (line == "return recipe") break;
    line = line.substr(0, line.find("  #"));
    if (want_class) {
      classes.push_back(line.substr(0, line.size() - 1));  // "GPTConfig,"
      want_class = false;
    } else if (std::regex_search(line, m, recipe)) {
      add("recipes", m[1]);
    } else if (line == ")" || line == "),") {
      if (!classes.empty()) classes.pop_back();
    } else if (!classes.empty() && std::regex_search(line, m, kwarg)) {
      add(classes.back(), m[1]);
      if (std::string(m[2]) == "run.Config(") want_class = true;
    } else if (line == "strategy = recipe.trainer.strategy") {
      continue;
    } else if (std::regex_search(line, m, assign)) {
      std::string field;
      const std::string object = nemo_object(m[1], field), rhs = m[2];
      if (!object.empty() && field != "callbacks") add(object, field);
      if (std::regex_search(rhs, m, factory)) add("mixed_precision", m[1]);
      if (std::regex_search(rhs, m, backend)) add("AttnBackend", m[1]);
      if (rhs == "run.Config(") want_class = true;
    } else if (line == "run.Config(") {
      want_class = true;
    }
  }
  return out;
}

}  // namespace trainsim::planner::emit::testing
