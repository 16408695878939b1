#pragma once

// N synthetic repos for scale benchmarks and pagination edges: "synthetic/model-00000", ...
// Each has `commits` commits (the first adds config.json, tokenizer_config.json and, when
// `tensors_per_file` > 0, a virtual model.safetensors; later ones change config.json),
// plus `extra_files` small files in the first commit. Deterministic for given options.

#include <string>
#include <vector>

#include "tests/fakehub/repo_model.h"

namespace hubwatch::fakehub {

struct SyntheticOptions {
  int repos = 1;
  int commits = 3;
  int extra_files = 0;
  int tensors_per_file = 8;
  std::string prefix = "synthetic/model-";
  std::string first_date = "2025-01-01T00:00:00.000Z";
};

std::vector<Repo> GenerateSyntheticRepos(const SyntheticOptions& options);

}  // namespace hubwatch::fakehub
