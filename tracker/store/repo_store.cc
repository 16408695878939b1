#include "tracker/store/repo_store.h"

#include "tracker/store/connection.h"

namespace hubwatch::store {
namespace {

std::string ToJsonText(const std::vector<std::string>& list) {
  return DumpJson(nlohmann::json(list));
}

}  // namespace

static Result<RepoRecord> ReadRepo(const Statement& q) {
  RepoRecord r;
  r.id = q.Text(0);
  Result<std::vector<std::string>> refs = StoredStringList(q.Text(1), "the refs of repo " + r.id);
  if (!refs.ok()) return refs.error();
  r.refs = std::move(refs).value();
  if (!ParseRepoState(q.Text(2), r.state)) {
    return Error::Io("store: the state of repo " + r.id + " is damaged: not a known state");
  }
  r.state_detail = q.Text(3);
  r.renamed_to = q.OptionalText(4);
  r.added_at = q.Int(5);
  r.last_polled_at = q.IsNull(6) ? 0 : q.Int(6);
  r.next_poll_at = q.Int(7);
  r.consecutive_errors = q.Int(8);
  const std::optional<Source> source = ParseSource(q.Text(9));
  if (!source) return Error::Io("store: the source of repo " + r.id + " is damaged");
  r.source = *source;
  return r;
}

constexpr const char kRepoColumns[] =
    "SELECT id, refs, state, state_detail, renamed_to, added_at, last_polled_at, next_poll_at, "
    "consecutive_errors, source FROM repos ";

Status RepoStore::AddRepo(const RepoRecord& repo) {
  HW_PREPARE(q,
             "INSERT INTO repos (id, refs, added_at, next_poll_at, source) "
             "VALUES (?1, ?2, ?3, ?4, ?5) "
             "ON CONFLICT (id) DO UPDATE SET refs = excluded.refs, source = excluded.source");
  return q.Bind(1, repo.id)
      .Bind(2, ToJsonText(repo.refs))
      .Bind(3, repo.added_at)
      .Bind(4, repo.next_poll_at)
      .Bind(5, SourceName(repo.source))
      .Run("adding repo " + repo.id);
}

Status RepoStore::RemoveRepo(const std::string& id) {
  return db_.Atomically([&]() -> Status {
    // Advisories reference changes, which reference revisions: delete leaf first.
    HW_TRY(advisories_.ForgetRepo(id));
    HW_PREPARE(r, "DELETE FROM repos WHERE id = ?1");
    return r.Bind(1, id).Run("removing repo " + id);
  });
}

Result<std::optional<RepoRecord>> RepoStore::GetRepo(const std::string& id) {
  static const std::string sql = std::string(kRepoColumns) + "WHERE id = ?1";
  HW_PREPARE(q, sql);
  q.Bind(1, id);
  return OptionalRow(q, "reading repo " + id, ReadRepo);
}

Result<std::vector<RepoRecord>> RepoStore::ListRepos() {
  static const std::string sql = std::string(kRepoColumns) + "ORDER BY id";
  HW_PREPARE(q, sql);
  return Collect(q, "listing repos", ReadRepo);
}

Status RepoStore::UpdateRepoPoll(const RepoRecord& repo) {
  HW_PREPARE(q,
             "UPDATE repos SET state = ?2, state_detail = ?3, renamed_to = ?4, "
             "last_polled_at = ?5, next_poll_at = ?6, consecutive_errors = ?7 WHERE id = ?1");
  return q.Bind(1, repo.id)
      .Bind(2, RepoStateName(repo.state))
      .Bind(3, repo.state_detail)
      .BindOptional(4, repo.renamed_to)
      .Bind(5, repo.last_polled_at)
      .Bind(6, repo.next_poll_at)
      .Bind(7, repo.consecutive_errors)
      .Run("updating repo " + repo.id);
}

Result<std::optional<std::string>> RepoStore::GetRefHead(const std::string& repo,
                                                         const std::string& ref) {
  HW_PREPARE(q, "SELECT sha FROM ref_heads WHERE repo = ?1 AND ref = ?2");
  q.Bind(1, repo).Bind(2, ref);
  return OptionalRow(q, "reading ref head", [](Statement& r) { return r.Text(0); });
}

Status RepoStore::SetRefHead(const std::string& repo, const std::string& ref,
                             const std::string& sha, int64_t now) {
  HW_PREPARE(q,
             "INSERT INTO ref_heads (repo, ref, sha, updated_at) VALUES (?1, ?2, ?3, ?4) "
             "ON CONFLICT (repo, ref) DO UPDATE SET sha = excluded.sha, "
             "updated_at = excluded.updated_at");
  return q.Bind(1, repo).Bind(2, ref).Bind(3, sha).Bind(4, now).Run("moving a ref cursor");
}

}  // namespace hubwatch::store
