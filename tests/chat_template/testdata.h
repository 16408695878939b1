#pragma once

// Access to the committed test data of tests/chat_template (the conformance corpus and the
// feature cases), shared by the tests and the benchmark.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "nlohmann/json.hpp"
#include "tracker/chat_template/render_diff.h"

namespace hubwatch::chat_template::testdata {

inline const std::filesystem::path& Dir() {
  static const std::filesystem::path dir = CHAT_TEMPLATE_TESTDATA_DIR;
  return dir;
}

inline std::filesystem::path CorpusDir() { return Dir() / "corpus"; }

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline nlohmann::ordered_json Manifest() {
  return nlohmann::ordered_json::parse(ReadFile(CorpusDir() / "manifest.json"));
}

// A corpus template with the special tokens its manifest entry records; empty source when
// there is no such template.
inline TemplateRevision CorpusTemplate(const std::string& id) {
  const nlohmann::ordered_json manifest = Manifest();
  for (const nlohmann::ordered_json& entry : manifest["templates"]) {
    if (entry["id"] != id) continue;
    return {ReadFile(CorpusDir() / entry["template"].get<std::string>()),
            VariablesFromJson(entry["variables"])};
  }
  return {};
}

}  // namespace hubwatch::chat_template::testdata
