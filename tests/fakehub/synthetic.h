#pragma once

// N synthetic repos for scale benchmarks and pagination edges: "synthetic/model-00000", ...,
// or, with `owners` = K > 0, "owner-XXXX/model-XXXXX" over K owners whose sizes are skewed like
// the Hub's (Zipf: owner i gets about (N - K) / (H_K * (i + 1)) repos on top of the one every
// owner has; repos are dealt to owners in a fixed shuffled order, so an owner's repos are spread
// over time). Repo r's commit c is dated first_date + r * 60 + c * 3600 either way. Each has
// `commits` commits (the first adds config.json, tokenizer_config.json and, when `tensors_per_file`
// > 0, a virtual model.safetensors; later ones change config.json), plus `extra_files` small files
// in the first commit. Deterministic for given options.

#include <map>
#include <string>
#include <vector>

#include "tests/fakehub/repo_model.h"

namespace hubwatch::fakehub {

struct SyntheticOptions {
  int repos = 1;
  int commits = 3;
  int extra_files = 0;
  int tensors_per_file = 8;
  std::string prefix = "synthetic/model-";  // used when owners == 0
  int owners = 0;                           // K > 0: "owner-XXXX/model-XXXXX"; REQUIRES K <= N
  std::string first_date = "2025-01-01T00:00:00.000Z";
};

std::vector<Repo> GenerateSyntheticRepos(const SyntheticOptions& options);

// N throwaway "derivatives" of `upstream`, as an attacker makes them to crowd the real ones out
// of the Hub's listing: tagged base_model:{upstream} and base_model:{relation}:{upstream}, with
// no downloads, no likes, created and committed at `time` - serial s at time + s - first_serial,
// so they are newer than anything before them and list newest first. Ids
// "throwaway-XX/{upstream's name}-spam-NNNNN" (XX: s % 97, NNNNN: the serial). Each holds
// `files` (path -> text) in one commit. Deterministic for given options.
struct SpamOptions {
  std::string upstream;
  int count = 1000;
  std::string relation = "adapter";  // finetune, adapter, quantized or merge
  int64_t time = 0;                  // Unix seconds
  int first_serial = 0;              // of the first; a second batch starts after the first
  std::map<std::string, std::string> files = {{"README.md", "# a copy\n"}};
};
std::vector<Repo> GenerateSpamChildren(const SpamOptions& options);

// The repo count of each of `owners` owners for `repos` repos (Zipf, each >= 1, descending,
// summing to `repos`). REQUIRES 0 < owners <= repos.
std::vector<int> SyntheticOwnerSizes(int repos, int owners);

}  // namespace hubwatch::fakehub
