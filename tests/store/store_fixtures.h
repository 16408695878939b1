#pragma once

// What the store suites share: opening a store, a temporary database file, a sample revision.

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "tracker/store/store.h"

namespace hubwatch::store {

inline std::unique_ptr<Store> OpenOrDie(const std::string& path, const StoreOptions& options = {}) {
  Result<std::unique_ptr<Store>> s = Store::Open(path, options);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? std::move(s).value() : nullptr;
}

// A database file in the test's temp dir, removed (with -wal/-shm) afterwards.
class TempDb {
 public:
  TempDb() {
    path_ = ::testing::TempDir() + "hubwatch_store_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
    Remove();
  }
  ~TempDb() { Remove(); }
  const std::string& path() const { return path_; }

 private:
  void Remove() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path_ + suffix).c_str());
  }
  std::string path_;
};

inline RevisionIngest SampleIngest(const std::string& sha, const std::string& parent) {
  RevisionIngest in;
  in.revision.repo = "google/gemma-2-9b-it";
  in.revision.sha = sha;
  if (!parent.empty()) in.revision.parents = {parent};
  in.revision.title = "Update config.json";
  in.revision.authors = {"osanseviero"};
  in.revision.refs = {"main"};
  in.revision.first_seen_at = 1700000000;
  in.manifest = {{"config.json", "oid-config-" + sha, 857, std::nullopt, std::nullopt},
                 {"model-00001-of-00004.safetensors", "oid-w1", 4903351912, "sha-w1", 4903351912}};
  in.blobs = {{"oid-config-" + sha, "{\"model_type\": \"gemma2\"}"}};
  SafetensorsHeader h;
  h.tensors["model.norm.weight"] = {"BF16", {3584}, 0, 7168, 3584};
  h.metadata["format"] = "pt";
  h.data_size = 7168;
  in.headers = {{"sha-w1", h}};
  diff::Change c;
  c.kind = diff::ChangeKind::kConfig;
  c.impact = diff::Impact::kBehavioral;
  c.path = "config.json";
  c.summary = "rope_theta 10000 -> 500000";
  c.details = {{"ops", nlohmann::json::array()}};
  in.changes = {c};
  in.estimate = EstimateRecord{
      in.revision.repo, sha, {{"schema", "hubwatch.estimate/1"}}, 9241705984, 9241705984,
      344064,           0};
  in.advisories = {{0,
                    "x_HUBWATCH-" + sha,
                    {{"id", "x_HUBWATCH-" + sha}},
                    "2026-12-02T00:00:00Z",
                    "2026-12-02T00:00:00Z",
                    {"subscription:1"}}};
  in.ref_heads = {{"main", sha}};
  return in;
}

}  // namespace hubwatch::store
