#pragma once

// The fetch plan of a new revision: its manifest from the Hub's tree, then which of its tracked
// small files and safetensors headers must be fetched. What the previous revision or the store
// already holds goes straight into the snapshot; the rest is listed: small files one per path,
// headers one per LFS sha256 (weights are never downloaded). Then what each fetch brings: the
// content, checked against its git blob id, or why the file is unreadable.
//
// Pure functions but for the store lookups passed in, which run on the calling thread.
// REQUIRES: the lookups of StoredContent are set.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/result.h"
#include "estimator/formats/safetensors_header.h"
#include "tracker/hub/client.h"
#include "tracker/pipeline/snapshot.h"

namespace hubwatch::pipeline {

// The files of a recursive tree, as the diff engines see them (an LFS file by its LFS size).
diff::Manifest ManifestFromTree(const std::vector<hub::TreeEntry>& tree);

struct BlobFetch {
  std::string path;
  std::string git_oid;  // what the fetched content must hash to
};
struct HeaderFetch {
  std::string path;
  std::string lfs_sha256;
};
struct FetchPlan {
  std::vector<BlobFetch> blobs;
  std::vector<HeaderFetch> headers;
};

// The store's content by git blob oid and by LFS sha256; nullopt when it has none.
struct StoredContent {
  std::function<Result<std::optional<std::string>>(const std::string& git_oid)> blob;
  std::function<Result<std::optional<SafetensorsHeader>>(const std::string& lfs_sha256)> header;
};

// Fills current.files and current.headers (current.manifest set) with what `base`, the previous
// revision (null for the first), or the store already has, and returns what is left to fetch. A
// small file is reused from `base` only at the same path with the same git oid (and fetched
// again when `base` could not read it). The first lookup error ends the planning.
Result<FetchPlan> PlanFetches(const Snapshot* base, Snapshot& current, const StoredContent& stored);

// Whether a failed file read is about the file (its content is bad: record it unreadable and
// move on) rather than about the repo or the network (stop; poll again later, losing nothing).
bool IsContentProblem(hub::HubErrorKind kind);

// What the fetches brought that the store does not have yet: stored with the revision.
struct NewContent {
  std::map<std::string, std::string> blobs;          // git oid -> content
  std::map<std::string, SafetensorsHeader> headers;  // LFS sha256 -> header
};

// A fetch's outcome into `current`: the content (kept in `fresh` too), or the reason it is
// missing in current.unreadable (an error, or content that does not hash to its git oid).
// REQUIRES: `read` is ok or failed with a content problem.
void RecordBlob(const BlobFetch& fetch, hub::HubResult<hub::FileContent> read, Snapshot& current,
                NewContent& fresh);
void RecordHeader(const HeaderFetch& fetch, hub::HubResult<hub::SafetensorsHeaderInfo> read,
                  Snapshot& current, NewContent& fresh);

}  // namespace hubwatch::pipeline
