#pragma once

// Loads fixture repos from a directory tree (format: tests/fixtures/hub/README.md). Every
// `repo.json` below `dir` is one repo; the files it names are relative to its own folder.
// Errors name the file and what is wrong; a fixture that contradicts itself (adds an existing
// path, declares a size its manifest does not produce) does not load. A {"gguf": ...} source is
// synthesized by gguf_blob.h.

#include <filesystem>
#include <vector>

#include "estimator/base/result.h"
#include "tests/fakehub/repo_model.h"

namespace hubwatch::fakehub {

Result<std::vector<Repo>> LoadFixtureRepos(const std::filesystem::path& dir);
// The repos below every one of `dirs`, in that order; a repo id defined twice (in one directory
// or across them) is an error naming both repo.json files.
Result<std::vector<Repo>> LoadFixtureDirs(const std::vector<std::filesystem::path>& dirs);
Result<Repo> LoadFixtureRepo(const std::filesystem::path& repo_json);
Result<SafetensorsManifest> LoadSafetensorsManifest(const std::filesystem::path& path);

}  // namespace hubwatch::fakehub
