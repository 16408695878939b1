#pragma once

// The command-line flags that name a model and pin its revision, shared by the readers of
// command lines wherever they are written: shell scripts, Dockerfiles and Makefiles
// (shell_references.h) and argument lists in YAML (yaml_args.h). Pure.

#include <array>
#include <string>
#include <string_view>

namespace hubwatch::audit {

inline constexpr std::array<std::string_view, 12> kModelFlags = {"--model_name_or_path",
                                                                 "--model-name-or-path",
                                                                 "--base_model",
                                                                 "--base-model",
                                                                 "--pretrained_model_name_or_path",
                                                                 "--model_id",
                                                                 "--model-id",
                                                                 "--model",
                                                                 "--tokenizer_name",
                                                                 "--tokenizer-name",
                                                                 "--tokenizer",
                                                                 "--model_name"};

inline constexpr std::array<std::string_view, 4> kRevisionFlags = {
    "--revision", "--model_revision", "--model-revision", "--base_model_revision"};

inline constexpr std::array<std::string_view, 2> kTokenizerRevisionFlags = {"--tokenizer-revision",
                                                                            "--tokenizer_revision"};

// A word's flag name with a dotted namespace dropped: `--reward.model_name_or_path` (OpenRLHF,
// jsonargparse-style CLIs) names `--model_name_or_path`. Words that are not `--` flags are
// returned unchanged; the result may point into *scratch.
inline std::string_view UnNamespaced(std::string_view w, std::string* scratch) {
  if (w.rfind("--", 0) != 0) return w;
  size_t end = w.find('=');
  size_t dot = w.substr(0, end).rfind('.');
  if (dot == std::string_view::npos || dot <= 2) return w;
  *scratch = "--";
  scratch->append(w.substr(dot + 1));
  return *scratch;
}

// Whether word `w` is `flag` itself (*inline_value false: the value is the next word) or
// `flag=V` (*inline_value true, *value = V). Namespaced flags match (UnNamespaced).
inline bool MatchFlag(std::string_view w, std::string_view flag, bool* inline_value,
                      std::string* value) {
  std::string scratch;
  w = UnNamespaced(w, &scratch);
  if (w == flag) {
    *inline_value = false;
    return true;
  }
  if (w.size() > flag.size() && w.substr(0, flag.size()) == flag && w[flag.size()] == '=') {
    *inline_value = true;
    *value = std::string(w.substr(flag.size() + 1));
    return true;
  }
  return false;
}

}  // namespace hubwatch::audit
