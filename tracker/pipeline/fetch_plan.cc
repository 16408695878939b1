#include "tracker/pipeline/fetch_plan.h"

#include <set>
#include <utility>

#include "tracker/pipeline/git_blob.h"
#include "tracker/pipeline/snapshot_loader.h"

namespace hubwatch::pipeline {
namespace {

// The previous revision's entry at e's path with e's git oid; null when there is none.
const diff::ManifestEntry* SameInBase(const Snapshot* base, const diff::ManifestEntry& e) {
  if (!base) return nullptr;
  for (const diff::ManifestEntry& be : base->manifest) {
    if (be.path == e.path && be.git_oid == e.git_oid) return &be;
  }
  return nullptr;
}

const SafetensorsHeader* HeaderInBase(const Snapshot* base, const std::string& lfs_sha256) {
  if (!base) return nullptr;
  auto it = base->headers.find(lfs_sha256);
  return it == base->headers.end() ? nullptr : &it->second;
}

}  // namespace

diff::Manifest ManifestFromTree(const std::vector<hub::TreeEntry>& tree) {
  diff::Manifest manifest;
  for (const hub::TreeEntry& t : tree) {
    if (t.type != "file") continue;
    diff::ManifestEntry e;
    e.path = t.path;
    e.git_oid = t.oid;
    e.size = t.size;
    if (t.lfs) {
      e.lfs_sha256 = t.lfs->oid;
      e.lfs_size = t.lfs->size;
      e.size = t.lfs->size;
    }
    manifest.push_back(std::move(e));
  }
  return manifest;
}

Result<FetchPlan> PlanFetches(const Snapshot* base, Snapshot& current,
                              const StoredContent& stored) {
  FetchPlan plan;
  std::set<std::string> header_ids;
  for (const diff::ManifestEntry& e : current.manifest) {
    if (IsTrackedSmallFile(e)) {
      std::optional<std::string> known;
      if (SameInBase(base, e)) {
        known = base->File(e.path);
      } else {
        Result<std::optional<std::string>> blob = stored.blob(e.git_oid);
        if (!blob.ok()) return blob.error();
        known = std::move(blob).value();
      }
      if (known) {
        current.files[e.path] = std::move(*known);
      } else {
        plan.blobs.push_back({e.path, e.git_oid});
      }
    } else if (IsSafetensorsFile(e) && header_ids.insert(*e.lfs_sha256).second) {
      std::optional<SafetensorsHeader> known;
      if (const SafetensorsHeader* in_base = HeaderInBase(base, *e.lfs_sha256)) {
        known = *in_base;
      } else {
        Result<std::optional<SafetensorsHeader>> header = stored.header(*e.lfs_sha256);
        if (!header.ok()) return header.error();
        known = std::move(header).value();
      }
      if (known) {
        current.headers.emplace(*e.lfs_sha256, std::move(*known));
      } else {
        plan.headers.push_back({e.path, *e.lfs_sha256});
      }
    }
  }
  return plan;
}

bool IsContentProblem(hub::HubErrorKind kind) {
  return kind == hub::HubErrorKind::kProtocol || kind == hub::HubErrorKind::kInvalidFile ||
         kind == hub::HubErrorKind::kEntryNotFound;
}

void RecordBlob(const BlobFetch& fetch, hub::HubResult<hub::FileContent> read, Snapshot& current,
                NewContent& fresh) {
  if (!read.ok()) {
    current.unreadable[fetch.path] = read.error().ToString();
  } else if (GitBlobOid(read->body) != fetch.git_oid) {
    current.unreadable[fetch.path] = "the content served does not match its git blob id " +
                                     fetch.git_oid + " (truncated or altered)";
  } else {
    fresh.blobs.emplace(fetch.git_oid, read->body);
    current.files[fetch.path] = std::move(read->body);
  }
}

void RecordHeader(const HeaderFetch& fetch, hub::HubResult<hub::SafetensorsHeaderInfo> read,
                  Snapshot& current, NewContent& fresh) {
  if (!read.ok()) {
    current.unreadable[fetch.path] = read.error().ToString();
  } else {
    fresh.headers.emplace(fetch.lfs_sha256, read->header);
    current.headers.emplace(fetch.lfs_sha256, std::move(read->header));
  }
}

}  // namespace hubwatch::pipeline
