#pragma once

// The store the API tests query: real ingestion, by the pipeline, of fixture repos served by
// fakehub (tests/fixtures/hub): Meta-Llama-3-8B-Instruct (config, generation_config and
// tokenizer changes, an estimate) and Mistral-7B-Instruct-v0.3 (five chat template commits).

#include <cstdint>
#include <string>
#include <vector>

#include "estimator/base/result.h"

namespace hubwatch::store {
class Store;
}

namespace hubwatch::api::testing {

inline constexpr const char kLlama[] = "meta-llama/Meta-Llama-3-8B-Instruct";
inline constexpr const char kMistral[] = "mistralai/Mistral-7B-Instruct-v0.3";
inline constexpr int64_t kIngestNow = 1733145155;  // 2024-12-02T13:12:35Z

// Polls `repos` once each from fakehub serving `fixtures_dir` into `store`, ingesting at
// kIngestNow.
Status PollFixtureRepos(const std::string& fixtures_dir, store::Store& store,
                        const std::vector<std::string>& repos);

// Polls both repos once into a new database at `path` (removed first).
Status BuildFixtureDb(const std::string& path);

// The fixture database for this process: $HUBWATCH_API_FIXTURE_DB when it names an existing
// file (ctest builds it once, see tests/api/CMakeLists.txt), else built on first use in the
// test temp dir.
const std::string& FixtureDb();

// Copies the database file at `from` to `to` (which must not be open).
Status CopyDb(const std::string& from, const std::string& to);

}  // namespace hubwatch::api::testing
