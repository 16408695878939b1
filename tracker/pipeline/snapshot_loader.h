#pragma once

// Loading a stored revision back as a Snapshot (manifest, tracked file contents, headers), and
// which files a snapshot needs. Runs on the store's thread.

#include <string>

#include "estimator/base/result.h"
#include "tracker/diff/manifest.h"
#include "tracker/pipeline/snapshot.h"
#include "tracker/store/store.h"

namespace hubwatch::pipeline {

// A small file whose content the diff engines read (config, tokenizer, template, index...).
bool IsTrackedSmallFile(const diff::ManifestEntry& entry);
// A safetensors file whose header the weights engine and the estimator read.
bool IsSafetensorsFile(const diff::ManifestEntry& entry);

// What LoadSnapshot reads back: everything a diff needs, or only what an estimate reads
// (config.json, the checkpoint index and the safetensors headers), as the pages want it.
enum class SnapshotContents { kForDiff, kForEstimate };

Result<Snapshot> LoadSnapshot(store::Store& store, const std::string& repo, const std::string& sha,
                              SnapshotContents contents = SnapshotContents::kForDiff);

}  // namespace hubwatch::pipeline
