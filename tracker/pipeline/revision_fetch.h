#pragma once

// RevisionFetch: one new revision's content from the Hub, after its tree: the plan
// (fetch_plan.h: what the previous revision or the store already holds is reused), then every
// small file by resolve and every safetensors header by range read, all at once. A file whose
// content is bad is recorded unreadable and the fetch goes on; an error about the repo or the
// network ends it at once (the poll fails and loses nothing; fetches still in flight are
// dropped).
//
// Thread safety: the client's loop thread; the store lookups run there too. REQUIRES: the client
// and the store outlive the fetch.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tracker/hub/client.h"
#include "tracker/pipeline/fetch_plan.h"
#include "tracker/pipeline/snapshot.h"
#include "tracker/store/store.h"

namespace hubwatch::pipeline {

struct FetchedRevision {
  Snapshot snapshot;  // sha, manifest, files, headers, unreadable
  NewContent fresh;   // what the fetches brought that the store lacks
  // Set when the fetch ended early: the Hub's error about the repo, or a store lookup's.
  std::optional<hub::HubError> hub_error;
  std::string local_error;
  hub::CallStats stats;  // every request, up to the end
};

// Fetches revision `sha` of `repo` whose recursive tree is `tree`; `base` is the revision before
// it (null for the first). `done` runs once.
void FetchRevision(hub::HubClient& hub, store::Store& store, const std::string& repo,
                   const std::string& sha, const std::vector<hub::TreeEntry>& tree,
                   const Snapshot* base, std::function<void(FetchedRevision)> done);

// Adds `s` to `total`.
void AddStats(hub::CallStats& total, const hub::CallStats& s);

}  // namespace hubwatch::pipeline
