#pragma once

// Fixture access for the estimator tests.

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace hubwatch::testing {

inline std::string FixturePath(const std::string& relative) {
  return std::string(HUBWATCH_FIXTURES_DIR) + "/" + relative;
}

inline std::string ReadFixture(const std::string& relative) {
  std::ifstream in(FixturePath(relative), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline nlohmann::json ReadJsonFixture(const std::string& relative) {
  return nlohmann::json::parse(ReadFixture(relative));
}

// "google/gemma-2-9b-it" -> "models/google__gemma-2-9b-it.config.json"
inline std::string ModelConfigPath(const std::string& repo) {
  std::string file = repo;
  file.replace(file.find('/'), 1, "__");
  return "models/" + file + ".config.json";
}

}  // namespace hubwatch::testing
