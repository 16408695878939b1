#pragma once

// Upstream's files around the F1 EOS fix (meta-llama/Meta-Llama-3-8B-Instruct in the bundled
// hub fixtures): v1 as uploaded, v2 after the three fixing commits.

#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace hubwatch::derivatives::testing {

inline std::string ReadFixture(const std::string& version, const std::string& name) {
  std::ifstream in("fixtures/hub/meta-llama/Meta-Llama-3-8B-Instruct/files/" + version + "/" +
                   name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The upload: every facet file at v1.
inline std::map<std::string, std::string> Llama3Upload() {
  std::map<std::string, std::string> files;
  for (const char* name : {"config.json", "generation_config.json", "tokenizer_config.json",
                           "special_tokens_map.json", "tokenizer.json"}) {
    files[name] = ReadFixture("v1", name);
  }
  return files;
}

// After all three fixing commits.
inline std::map<std::string, std::string> Llama3Fixed() {
  std::map<std::string, std::string> files = Llama3Upload();
  for (const char* name : {"config.json", "generation_config.json", "tokenizer_config.json"}) {
    files[name] = ReadFixture("v2", name);
  }
  return files;
}

}  // namespace hubwatch::derivatives::testing
