#pragma once

// The hubwatch configuration file: JSON, documented in daemon/hubwatch.example.json.
//
//   {"store": "hubwatch.db",
//    "hub": {"endpoint": "http://127.0.0.1:8080", "token_file": "token", "max_concurrent": 8},
//    "repos": [{"id": "google/gemma-2-9b-it", "refs": ["main"]}],
//    "poll": {"interval_s": 900, "advise_cosmetic": false}}
//
// Relative paths are relative to the directory of the config file. Unknown keys are errors (a
// typo must not silently become a default). Plain value types.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/result.h"

namespace hubwatch::cli {

struct RepoConfig {
  std::string id;
  std::vector<std::string> refs{"main"};
};

struct HubOptionsConfig {
  std::optional<std::string> endpoint;    // else HF_ENDPOINT, else https://huggingface.co
  std::optional<std::string> token_file;  // else HF_TOKEN, else HF_TOKEN_PATH
  int max_concurrent = 8;                 // transfers in flight
  uint64_t max_safetensors_header_bytes = 25'000'000;
};

struct PollConfig {
  int64_t interval_s = 900;
  bool advise_cosmetic = false;  // cosmetic changes are stored; advised only when true
};

struct DaemonConfig {
  std::string path;  // the file it was read from
  std::string store = "hubwatch.db";
  HubOptionsConfig hub;
  std::vector<RepoConfig> repos;
  PollConfig poll;
};

// Reads and validates the file; errors name the file and the key.
Result<DaemonConfig> LoadConfig(const std::string& path);
// Parses config JSON text; `base_dir` resolves relative paths ("" = as given).
Result<DaemonConfig> ParseConfig(std::string_view text, const std::string& base_dir);

// The token from hub.token_file (trimmed), if configured. Never logged.
Result<std::optional<std::string>> ReadTokenFile(const DaemonConfig& config);

}  // namespace hubwatch::cli
