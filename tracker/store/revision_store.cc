// RevisionStore: revisions with their manifests, blobs and headers, and Ingest. Changes,
// estimates and the HTTP cache are in revision_changes.cc.

#include "tracker/store/revision_store.h"

#include <cstdint>
#include <string_view>
#include <tuple>

#include "tracker/diff/json_text.h"
#include "tracker/store/connection.h"

namespace hubwatch::store {
namespace {

std::string ToJsonText(const std::vector<std::string>& list) {
  return DumpJson(nlohmann::json(list));
}

// An int64 shape dimension as HeaderToJson wrote it: a non-negative integer.
bool ReadDimension(const nlohmann::json& v, int64_t& out) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return false;
    out = static_cast<int64_t>(v.get<uint64_t>());
    return true;
  }
  return false;  // negative or not an integer: HeaderToJson never writes one
}

// A change's details as stored: within diff::kMaxDetailsBytes whatever the engine wrote.
std::string BoundedDetailsText(const nlohmann::json& details) {
  std::string text = DumpJson(details);
  if (text.size() > diff::kMaxDetailsBytes) text = DumpJson(diff::BoundDetails(details));
  return text;
}

nlohmann::json HeaderToJson(const SafetensorsHeader& h) {
  nlohmann::json tensors = nlohmann::json::object();
  for (const auto& [name, t] : h.tensors) {
    tensors[name] = {t.dtype, t.shape, t.data_begin, t.data_end};
  }
  return {{"tensors", std::move(tensors)}, {"metadata", h.metadata}, {"data_size", h.data_size}};
}

Result<SafetensorsHeader> HeaderFromJson(const std::string& text, const std::string& what) {
  Result<nlohmann::json> doc = StoredJson(text, what);
  if (!doc.ok()) return doc.error();
  auto damaged = [&](const std::string& why) {
    return Error::Io("store: " + what + " is damaged: " + why);
  };
  const nlohmann::json& j = *doc;
  const auto tensors = j.is_object() ? j.find("tensors") : j.end();
  if (tensors == j.end() || !tensors->is_object()) return damaged("no \"tensors\" object");
  SafetensorsHeader h;
  for (auto it = tensors->begin(); it != tensors->end(); ++it) {
    const nlohmann::json& v = *it;
    SafetensorsTensor t;
    if (!v.is_array() || v.size() != 4 || !v[0].is_string() || !v[1].is_array() ||
        !v[2].is_number_unsigned() || !v[3].is_number_unsigned()) {
      return damaged("a tensor is not [dtype, shape, begin, end]");
    }
    t.dtype = v[0].get<std::string>();
    for (const nlohmann::json& d : v[1]) {
      int64_t dim = 0;
      if (!ReadDimension(d, dim) ||
          __builtin_mul_overflow(t.elements, static_cast<uint64_t>(dim), &t.elements)) {
        return damaged("a tensor shape is not a list of sizes");
      }
      t.shape.push_back(dim);
    }
    t.data_begin = v[2].get<uint64_t>();
    t.data_end = v[3].get<uint64_t>();
    h.tensors.emplace(it.key(), std::move(t));
  }
  if (const auto metadata = j.find("metadata"); metadata != j.end()) {
    if (!metadata->is_object()) return damaged("\"metadata\" is not an object");
    for (auto it = metadata->begin(); it != metadata->end(); ++it) {
      if (!it->is_string()) return damaged("\"metadata\" holds a value that is not a string");
      h.metadata.emplace(it.key(), it->get<std::string>());
    }
  }
  if (const auto size = j.find("data_size"); size != j.end()) {
    if (!size->is_number_unsigned()) return damaged("\"data_size\" is not a size");
    h.data_size = size->get<uint64_t>();
  }
  return h;
}

}  // namespace

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
    return InsertRevision(in);
  });
  if (!s.ok()) return s.error();
  return outcome;
}

Status RevisionStore::InsertRevision(const RevisionIngest& in) {
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
    HW_PREPARE(q,
               "INSERT INTO changes (repo, sha, ordinal, kind, impact, path, summary, details, "
               "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
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
  return Status::Ok();
}

}  // namespace hubwatch::store
