// RevisionWriter: the rows of one new revision.

#include "tracker/store/revision_writer.h"

#include <cstdint>

#include "tracker/diff/json_text.h"
#include "tracker/store/connection.h"
#include "tracker/store/header_json.h"

namespace hubwatch::store {
namespace {

std::string ToJsonText(const std::vector<std::string>& list) {
  return DumpJson(nlohmann::json(list));
}

// A change's details as stored: within diff::kMaxDetailsBytes whatever the engine wrote.
std::string BoundedDetailsText(const nlohmann::json& details) {
  std::string text = DumpJson(details);
  if (text.size() > diff::kMaxDetailsBytes) text = DumpJson(diff::BoundDetails(details));
  return text;
}

// The commit time of revision (?1, ?2), as "since" compares it (since.h): the Hub's commit
// time, else when hubwatch first saw it.
#define HW_COMMIT_TIME                                                            \
  "(SELECT COALESCE(CAST(strftime('%s', NULLIF(r.authored_at, '')) AS INTEGER), " \
  "r.first_seen_at) FROM revisions r WHERE r.repo = ?1 AND r.sha = ?2)"

// A repo's family from its newest estimate `e`, as schema/migrations/0012_paged_lists.sql
// backfilled it: model_type, "no model_type" when empty, "unknown" without figures.
#define HW_FAMILY_OF                                                               \
  "CASE WHEN json_type(e.estimate, '$.params.total') IS NOT 'integer' "            \
  "OR json_extract(e.estimate, '$.params.total') < 0 "                             \
  "OR json_type(e.estimate, '$.model') IS NOT 'object' "                           \
  "OR json_type(e.estimate, '$.model.model_type') IS NOT 'text' THEN 'unknown' "   \
  "WHEN json_extract(e.estimate, '$.model.model_type') = '' THEN 'no model_type' " \
  "ELSE substr(json_extract(e.estimate, '$.model.model_type'), 1, 100) END"

}  // namespace

Status RevisionWriter::Insert(const RevisionIngest& in) {
  const RevisionRecord& rev = in.revision;
  {
    HW_PREPARE(q,
               "INSERT INTO revisions (repo, sha, parents, authored_at, title, message, "
               "authors, refs, first_seen_at, ingest_order) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
               "?7, ?8, ?9, (SELECT COALESCE(MAX(ingest_order), 0) + 1 FROM revisions "
               "WHERE repo = ?1))");
    HW_TRY(q.Bind(1, rev.repo)
               .Bind(2, rev.sha)
               .Bind(3, ToJsonText(rev.parents))
               .Bind(4, rev.authored_at)
               .Bind(5, rev.title)
               .Bind(6, rev.message)
               .Bind(7, ToJsonText(rev.authors))
               .Bind(8, ToJsonText(rev.refs))
               .Bind(9, rev.first_seen_at)
               .Run("recording revision " + rev.sha));
  }
  for (const diff::ManifestEntry& f : in.manifest) {
    HW_PREPARE(q,
               "INSERT INTO manifests (repo, sha, path, oid, size, lfs_sha256) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    HW_TRY(q.Bind(1, rev.repo)
               .Bind(2, rev.sha)
               .Bind(3, f.path)
               .Bind(4, f.git_oid)
               .Bind(5, static_cast<int64_t>(f.size))
               .BindOptional(6, f.lfs_sha256)
               .Run("recording manifest"));
  }
  for (const auto& [oid, content] : in.blobs) {
    HW_PREPARE(q, "INSERT OR IGNORE INTO blobs (oid, content) VALUES (?1, ?2)");
    HW_TRY(q.Bind(1, oid).BindBlob(2, content).Run("storing blob " + oid));
  }
  for (const auto& [sha256, header] : in.headers) {
    uint64_t elements = 0;
    for (const auto& [name, t] : header.tensors) elements += t.elements;
    HW_PREPARE(q,
               "INSERT OR IGNORE INTO safetensors_headers (sha256, tensors, count, elements) "
               "VALUES (?1, ?2, ?3, ?4)");
    HW_TRY(q.Bind(1, sha256)
               .Bind(2, DumpJson(HeaderToJson(header)))
               .Bind(3, static_cast<int64_t>(header.tensors.size()))
               .Bind(4, static_cast<int64_t>(elements))
               .Run("storing safetensors header"));
  }
  std::vector<int64_t> change_ids;
  for (size_t i = 0; i < in.changes.size(); ++i) {
    const diff::Change& c = in.changes[i];
    HW_PREPARE(
        q,
        "INSERT INTO changes (repo, sha, ordinal, kind, impact, path, summary, details, "
        "created_at, committed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, " HW_COMMIT_TIME
        ")");
    HW_TRY(q.Bind(1, rev.repo)
               .Bind(2, rev.sha)
               .Bind(3, static_cast<int64_t>(i))
               .Bind(4, diff::KindName(c.kind))
               .Bind(5, diff::ImpactName(c.impact))
               .Bind(6, c.path)
               .Bind(7, c.summary.size() > diff::kMaxSummaryBytes
                            ? diff::CutText(c.summary, diff::kMaxSummaryBytes)
                            : c.summary)
               .Bind(8, BoundedDetailsText(c.details))
               .Bind(9, rev.first_seen_at)
               .Run("recording a change"));
    change_ids.push_back(sqlite3_last_insert_rowid(db_.handle()));
  }
  if (in.estimate) {
    const EstimateRecord& e = *in.estimate;
    HW_PREPARE(q,
               "INSERT INTO estimates (repo, sha, estimate, params_total, params_active, "
               "kv_bytes_per_token, parameter_delta) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    HW_TRY(q.Bind(1, rev.repo)
               .Bind(2, rev.sha)
               .Bind(3, e.estimate.dump())
               .Bind(4, static_cast<int64_t>(e.params_total))
               .Bind(5, static_cast<int64_t>(e.params_active))
               .Bind(6, e.kv_bytes_per_token)
               .BindOptional(7, e.parameter_delta)
               .Run("recording the estimate"));
  }
  HW_TRY(advisories_.RecordAdvisories(in, change_ids));
  for (const auto& [ref, sha] : in.ref_heads) {
    HW_PREPARE(q,
               "INSERT INTO ref_heads (repo, ref, sha, updated_at) VALUES (?1, ?2, ?3, ?4) "
               "ON CONFLICT (repo, ref) DO UPDATE SET sha = excluded.sha, "
               "updated_at = excluded.updated_at");
    HW_TRY(q.Bind(1, rev.repo)
               .Bind(2, ref)
               .Bind(3, sha)
               .Bind(4, rev.first_seen_at)
               .Run("moving the ref cursor"));
  }
  for (const std::string& sha : in.rewritten_away) {
    HW_PREPARE(q, "UPDATE revisions SET rewritten_away = 1 WHERE repo = ?1 AND sha = ?2");
    HW_TRY(q.Bind(1, rev.repo).Bind(2, sha).Run("marking rewritten revisions"));
  }
  return UpdateListedFacts(rev, !in.changes.empty());
}

// repos.family and repos.last_change_at (schema/migrations/0012_paged_lists.sql), after the
// revision's rows: its estimate, or a rewrite, may change which estimate is the newest.
Status RevisionWriter::UpdateListedFacts(const RevisionRecord& rev, bool changed) {
  HW_PREPARE(q, "UPDATE repos SET family = COALESCE((SELECT " HW_FAMILY_OF
                " FROM estimates e "
                "JOIN revisions r ON r.repo = e.repo AND r.sha = e.sha WHERE e.repo = ?1 "
                "AND r.rewritten_away = 0 AND json_valid(e.estimate) "
                "ORDER BY r.ingest_order DESC LIMIT 1), 'unknown'), "
                "last_change_at = CASE WHEN ?3 THEN max(COALESCE(last_change_at, 0), "
                "(SELECT committed_at FROM changes WHERE repo = ?1 AND sha = ?2 LIMIT 1)) "
                "ELSE last_change_at END WHERE id = ?1");
  return q.Bind(1, rev.repo)
      .Bind(2, rev.sha)
      .Bind(3, int64_t{changed ? 1 : 0})
      .Run("recording the family and last change of " + rev.repo);
}

}  // namespace hubwatch::store
