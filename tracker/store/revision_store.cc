// RevisionStore: revisions with their manifests, blobs and headers, and Ingest (whose rows
// RevisionWriter writes). Changes and estimates are in revision_changes.cc.

#include "tracker/store/revision_store.h"

#include <cstdint>
#include <string_view>
#include <tuple>

#include "tracker/store/connection.h"
#include "tracker/store/header_json.h"

namespace hubwatch::store {

Result<bool> RevisionStore::HasRevision(const std::string& repo, const std::string& sha) {
  HW_PREPARE(q, "SELECT 1 FROM revisions WHERE repo = ?1 AND sha = ?2");
  q.Bind(1, repo).Bind(2, sha);
  return q.Step("looking up revision");
}

constexpr const char kRevisionColumns[] =
    "SELECT repo, sha, parents, authored_at, title, message, authors, refs, first_seen_at, "
    "ingest_order, rewritten_away FROM revisions ";

static Result<RevisionRecord> ReadRevision(const Statement& q) {
  RevisionRecord r;
  r.repo = q.Text(0);
  r.sha = q.Text(1);
  const std::string of = " of revision " + r.repo + "@" + r.sha;
  for (auto [column, list, name] :
       {std::tuple{2, &r.parents, "the parents"}, std::tuple{6, &r.authors, "the authors"},
        std::tuple{7, &r.refs, "the refs"}}) {
    Result<std::vector<std::string>> read = StoredStringList(q.Text(column), name + of);
    if (!read.ok()) return read.error();
    *list = std::move(read).value();
  }
  r.authored_at = q.Text(3);
  r.title = q.Text(4);
  r.message = q.Text(5);
  r.first_seen_at = q.Int(8);
  r.ingest_order = q.Int(9);
  r.rewritten_away = q.Int(10) != 0;
  return r;
}

Result<std::optional<RevisionRecord>> RevisionStore::GetRevision(const std::string& repo,
                                                                 const std::string& sha) {
  static const std::string sql = std::string(kRevisionColumns) + "WHERE repo = ?1 AND sha = ?2";
  HW_PREPARE(q, sql);
  q.Bind(1, repo).Bind(2, sha);
  return OptionalRow(q, "reading revision", ReadRevision);
}

Result<std::vector<RevisionRecord>> RevisionStore::ListRevisions(const std::string& repo,
                                                                 int64_t limit,
                                                                 const std::string& before) {
  static const std::string sql =
      std::string(kRevisionColumns) +
      "WHERE repo = ?1 AND (?3 = '' OR ingest_order < (SELECT ingest_order FROM revisions "
      "WHERE repo = ?1 AND sha = ?3)) ORDER BY ingest_order DESC LIMIT ?2";
  HW_PREPARE(q, sql);
  q.Bind(1, repo).Bind(2, limit > 0 ? limit : int64_t{-1}).Bind(3, before);
  return Collect(q, "listing revisions", ReadRevision);
}

Result<std::optional<RevisionRecord>> RevisionStore::LatestRevision(const std::string& repo) {
  static const std::string sql = std::string(kRevisionColumns) +
                                 "WHERE repo = ?1 AND rewritten_away = 0 "
                                 "ORDER BY ingest_order DESC LIMIT 1";
  HW_PREPARE(q, sql);
  q.Bind(1, repo);
  return OptionalRow(q, "reading the latest revision", ReadRevision);
}

Result<diff::Manifest> RevisionStore::GetManifest(const std::string& repo, const std::string& sha) {
  HW_PREPARE(q,
             "SELECT path, oid, size, lfs_sha256 FROM manifests WHERE repo = ?1 AND sha = ?2 "
             "ORDER BY path");
  q.Bind(1, repo).Bind(2, sha);
  diff::Manifest out;
  while (true) {
    Result<bool> row = q.Step("reading manifest");
    if (!row.ok()) return row.error();
    if (!*row) return out;
    diff::ManifestEntry e;
    e.path = q.Text(0);
    e.git_oid = q.Text(1);
    e.size = static_cast<uint64_t>(q.Int(2));
    e.lfs_sha256 = q.OptionalText(3);
    if (e.lfs_sha256) e.lfs_size = e.size;
    out.push_back(std::move(e));
  }
}

Result<std::optional<std::string>> RevisionStore::GetBlob(const std::string& oid) {
  HW_PREPARE(q, "SELECT content FROM blobs WHERE oid = ?1");
  q.Bind(1, oid);
  return OptionalRow(q, "reading blob", [](Statement& r) { return r.Blob(0); });
}

Result<std::optional<SafetensorsHeader>> RevisionStore::GetHeader(const std::string& sha256) {
  HW_PREPARE(q, "SELECT tensors FROM safetensors_headers WHERE sha256 = ?1");
  q.Bind(1, sha256);
  return OptionalRow(q, "reading safetensors header", [&](Statement& r) {
    return HeaderFromJson(r.Text(0), "safetensors header " + sha256);
  });
}

Result<std::optional<uint64_t>> RevisionStore::HeaderBytes(const std::string& sha256) {
  // Its bytes as a BLOB (length() of TEXT counts characters): read, not parsed.
  HW_PREPARE(q, "SELECT length(CAST(tensors AS BLOB)) FROM safetensors_headers WHERE sha256 = ?1");
  q.Bind(1, sha256);
  return OptionalRow(q, "reading a safetensors header's size",
                     [&](Statement& r) { return static_cast<uint64_t>(r.Int(0)); });
}

Result<IngestOutcome> RevisionStore::Ingest(const RevisionIngest& in) {
  const RevisionRecord& rev = in.revision;
  IngestOutcome outcome = IngestOutcome::kIngested;
  Status s = db_.Atomically([&]() -> Status {
    {
      HW_PREPARE(q, "SELECT 1 FROM revisions WHERE repo = ?1 AND sha = ?2");
      Result<bool> exists = q.Bind(1, rev.repo).Bind(2, rev.sha).Step("checking revision");
      if (!exists.ok()) return exists.error();
      if (*exists) {
        outcome = IngestOutcome::kAlreadyPresent;
        return Status::Ok();  // an empty transaction: nothing changes
      }
    }
    return writer_.Insert(in);
  });
  if (!s.ok()) return s.error();
  return outcome;
}

}  // namespace hubwatch::store
