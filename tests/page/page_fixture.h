#pragma once

// The store the page tests read: real ingestion, by the pipeline, of fixture repos served by
// fakehub - google/gemma-2-9b-it (4 shards: the checkpoint comparison), Mistral-7B-Instruct-v0.3
// (chat template diffs with rendered prompts), Phi-3-mini-4k-instruct (a weights refresh),
// Meta-Llama-3-8B-Instruct (config patches), the hostile repo of tests/fixtures/hub-hostile, and
// one model of each kind of tests/fixtures/hub-kinds (an encoder, a multimodal wrapper, a
// checkpoint without a config.json).

#include <cstdint>
#include <string>

#include "estimator/base/result.h"

namespace hubwatch::page::testing {

inline constexpr const char kGemma[] = "google/gemma-2-9b-it";
inline constexpr const char kMistral[] = "mistralai/Mistral-7B-Instruct-v0.3";
inline constexpr const char kPhi3[] = "microsoft/Phi-3-mini-4k-instruct";
inline constexpr const char kLlama[] = "meta-llama/Meta-Llama-3-8B-Instruct";
inline constexpr const char kHostile[] = "hostile-org/payload-model";
inline constexpr const char kEncoder[] = "sentence-transformers/all-MiniLM-L6-v2";
inline constexpr const char kMultimodal[] = "edbeeching/vsft-llava-1.5-7b-hf";
inline constexpr const char kWeightsOnly[] = "fixture-org/weights-without-config";
inline constexpr int64_t kIngestNow = 1733145155;  // 2024-12-02T13:12:35Z

// Polls the repos above once into a new database at `path` (removed first).
Status BuildPageDb(const std::string& path);

// Adds `n` synthetic revisions on top of `repo`'s newest, each with a config change (a patch
// row), for benchmarks that want a long history.
Status AddSyntheticHistory(const std::string& path, const std::string& repo, int n);

}  // namespace hubwatch::page::testing
