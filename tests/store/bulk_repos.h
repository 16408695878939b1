#pragma once

// Many tracked repos, fast, for the tests of the paged lists: one transaction of AddRepo, and
// a revision with one change ingested per repo when asked (the way the pipeline writes them, so
// repos.family, repos.last_change_at and changes.committed_at come from RevisionWriter).

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tracker/store/store.h"

namespace hubwatch::store::testing {

// When FillRepos's revisions were committed (+ i): 2033-05-18T03:33:20Z, after anything the
// fixtures hold, so "since" a time from then on selects the bulk rows only.
inline constexpr int64_t kBulkEpoch = 2'000'000'000;

// "bulk-07/model-00042": owner = i % 10, so the ids sort by owner first.
inline std::string BulkId(int i) {
  char id[64];
  std::snprintf(id, sizeof id, "bulk-%02d/model-%06d", i % 10, i);
  return id;
}

// A revision of `repo` with one change, committed at `committed_at`, whose estimate names
// `family` (no estimate when empty).
inline RevisionIngest BulkRevision(const std::string& repo, int i, int64_t committed_at,
                                   const std::string& family) {
  RevisionIngest in;
  in.revision.repo = repo;
  char sha[41];
  std::snprintf(sha, sizeof sha, "%040x", i + 1);
  in.revision.sha = sha;
  in.revision.first_seen_at = committed_at;
  diff::Change c;
  c.kind = diff::ChangeKind::kConfig;
  c.impact = i % 3 == 0 ? diff::Impact::kBreaking : diff::Impact::kBehavioral;
  c.path = "config.json";
  c.summary = "rope_theta 10000 -> " + std::to_string(i);
  in.changes = {c};
  if (!family.empty()) {
    in.estimate = EstimateRecord{repo,
                                 sha,
                                 {{"schema", "hubwatch.estimate/1"},
                                  {"params", {{"total", 1000 + i}}},
                                  {"model", {{"model_type", family}, {"source", "modelled"}}}},
                                 static_cast<uint64_t>(1000 + i),
                                 static_cast<uint64_t>(1000 + i),
                                 0,
                                 {}};
  }
  in.ref_heads = {{"main", sha}};
  return in;
}

// Tracks BulkId(first) .. BulkId(first + count - 1) in one transaction; with `revisions`, each
// gets BulkRevision (committed at kBulkEpoch + i, family "fam-" + i % 7).
inline void FillRepos(Store& store, int first, int count, bool revisions) {
  Status s = store.Batch([&] {
    for (int i = first; i < first + count; ++i) {
      ASSERT_TRUE(store.repos().AddRepo({.id = BulkId(i), .refs = {"main"}, .added_at = 1}).ok());
      if (!revisions) continue;
      Result<IngestOutcome> in = store.revisions().Ingest(
          BulkRevision(BulkId(i), i, kBulkEpoch + i, "fam-" + std::to_string(i % 7)));
      ASSERT_TRUE(in.ok()) << in.error().message;
    }
  });
  ASSERT_TRUE(s.ok()) << s.error().message;
}

}  // namespace hubwatch::store::testing
