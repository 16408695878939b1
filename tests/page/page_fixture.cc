#include "tests/page/page_fixture.h"

#include <cstdio>

#include "tests/api/api_fixture.h"
#include "tracker/store/store.h"

namespace hubwatch::page::testing {
Status BuildPageDb(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  auto opened = store::Store::Open(path);
  if (!opened.ok()) return opened.error();
  std::unique_ptr<store::Store> store = std::move(opened).value();
  const std::string fixtures = HUBWATCH_FIXTURES_DIR;
  if (Status s = api::testing::PollFixtureRepos(fixtures + "/hub", *store,
                                                {kGemma, kMistral, kPhi3, kLlama});
      !s.ok()) {
    return s;
  }
  if (Status s = api::testing::PollFixtureRepos(fixtures + "/hub-hostile", *store, {kHostile});
      !s.ok()) {
    return s;
  }
  return api::testing::PollFixtureRepos(fixtures + "/hub-kinds", *store,
                                        {kEncoder, kMultimodal, kWeightsOnly});
}

Status AddSyntheticHistory(const std::string& path, const std::string& repo, int n) {
  auto opened = store::Store::Open(path);
  if (!opened.ok()) return opened.error();
  store::Store& store = **opened;
  auto revs = store.revisions().ListRevisions(repo, 1);
  if (!revs.ok()) return revs.error();
  if (revs->empty()) return Error::InvalidInput("no revision of " + repo);
  std::string parent = revs->front().sha;
  auto manifest = store.revisions().GetManifest(repo, parent);
  if (!manifest.ok()) return manifest.error();
  for (int i = 0; i < n; ++i) {
    char sha[41];
    std::snprintf(sha, sizeof sha, "%040x", 0xabc000 + i);
    store::RevisionIngest in;
    in.revision.repo = repo;
    in.revision.sha = sha;
    in.revision.parents = {parent};
    in.revision.authored_at =
        "2024-07-" + std::string(i + 1 < 10 ? "0" : "") + std::to_string(i + 1) + "T10:00:00.000Z";
    in.revision.title = "Update generation settings (#" + std::to_string(i + 1) + ")";
    in.revision.message = "Tune the sampling defaults.";
    in.revision.authors = {"hf-maintainer"};
    in.revision.first_seen_at = kIngestNow + i;
    in.manifest = *manifest;
    diff::Change c{diff::ChangeKind::kGenerationConfig, diff::Impact::kBehavioral,
                   "generation_config.json",
                   "temperature " + std::to_string(i) + " -> " + std::to_string(i + 1)};
    c.details = {{"file", "generation_config.json"},
                 {"status", "modified"},
                 {"ops",
                  {{{"op", "replace"},
                    {"path", "/temperature"},
                    {"old_value", i},
                    {"value", i + 1},
                    {"impact", "behavioral"}}}},
                 {"op_count", 1}};
    in.changes.push_back(std::move(c));
    in.ref_heads = {{"main", sha}};
    auto done = store.revisions().Ingest(in);
    if (!done.ok()) return done.error();
    parent = sha;
  }
  return Status::Ok();
}

}  // namespace hubwatch::page::testing
