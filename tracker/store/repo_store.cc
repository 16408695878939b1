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
  r.last_reconciled_at = q.IsNull(10) ? 0 : q.Int(10);
  if (!q.IsNull(11)) {
    r.last_change_found_by = ParsePollTrigger(q.Text(11));
    if (!r.last_change_found_by) {
      return Error::Io("store: how repo " + r.id + "'s last change was found is damaged");
    }
  }
  if (!q.IsNull(12)) r.hub_info.downloads = q.Int(12);
  if (!q.IsNull(13)) r.hub_info.likes = q.Int(13);
  if (!q.IsNull(14)) {
    Result<std::vector<std::string>> tags =
        StoredStringList(q.Text(14), "the tags of repo " + r.id);
    if (!tags.ok()) return tags.error();
    r.hub_info.tags = std::move(tags).value();
  }
  r.hub_info.fetched_at = q.IsNull(15) ? 0 : q.Int(15);
  Result<std::vector<std::string>> pins = StoredStringList(q.Text(16), "the pins of repo " + r.id);
  if (!pins.ok()) return pins.error();
  r.pins = std::move(pins).value();
  r.caught_up_at = q.IsNull(17) ? 0 : q.Int(17);
  r.tracked = q.Int(18) != 0;
  r.baseline = q.Int(19) != 0;
  r.followed_by = q.OptionalText(20);
  return r;
}

constexpr const char kRepoColumns[] =
    "SELECT id, refs, state, state_detail, renamed_to, added_at, last_polled_at, next_poll_at, "
    "consecutive_errors, source, last_reconciled_at, last_change_found_by, hub_downloads, "
    "hub_likes, hub_tags, hub_info_at, pins, caught_up_at, tracked, baseline, "
    "(SELECT rule FROM follows WHERE follows.repo = repos.id) FROM repos ";

Status RepoStore::AddRepo(const RepoRecord& repo) {
  // A row whose refs, source and pins are already these (and that is tracked) is left alone: a
  // start or a reload registers every configured repo again, and rewriting each row dirtied
  // every page of the table (at 100,000 repos, tens of MB through the WAL on every SIGHUP).
  HW_PREPARE(q,
             "INSERT INTO repos (id, refs, added_at, next_poll_at, source, pins, baseline) "
             "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
             "ON CONFLICT (id) DO UPDATE SET refs = excluded.refs, source = excluded.source, "
             "pins = excluded.pins, tracked = 1 WHERE repos.refs IS NOT excluded.refs OR "
             "repos.source IS NOT excluded.source OR repos.pins IS NOT excluded.pins OR "
             "repos.tracked = 0");
  HW_TRY(q.Bind(1, repo.id)
             .Bind(2, ToJsonText(repo.refs))
             .Bind(3, repo.added_at)
             .Bind(4, repo.next_poll_at)
             .Bind(5, SourceName(repo.source))
             .Bind(6, ToJsonText(repo.pins))
             .Bind(7, int64_t{repo.baseline ? 1 : 0})
             .Run("adding repo " + repo.id));
  // Named by the configuration or the API, it is theirs now: no rule untracks it.
  HW_PREPARE(f, "DELETE FROM follows WHERE repo = ?1");
  return f.Bind(1, repo.id).Run("claiming repo " + repo.id);
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

Result<std::optional<std::string>> RepoStore::FindIdIgnoringCase(const std::string& id) {
  HW_PREPARE(q, "SELECT id FROM repos WHERE id = ?1 COLLATE NOCASE ORDER BY id LIMIT 1");
  q.Bind(1, id);
  return OptionalRow(q, "looking up repo " + id, [](Statement& r) { return r.Text(0); });
}

Result<std::vector<RepoRecord>> RepoStore::ListRepos() {
  static const std::string sql = std::string(kRepoColumns) + "ORDER BY id";
  HW_PREPARE(q, sql);
  return Collect(q, "listing repos", ReadRepo);
}

Result<std::vector<RepoSchedule>> RepoStore::ListSchedules() {
  HW_PREPARE(q, "SELECT id, source, next_poll_at FROM repos WHERE tracked = 1 ORDER BY id");
  return Collect(q, "listing repo schedules", [](Statement& r) -> Result<RepoSchedule> {
    RepoSchedule out{r.Text(0), Source::kApi, r.Int(2)};
    const std::optional<Source> source = ParseSource(r.Text(1));
    if (!source) return Error::Io("store: the source of repo " + out.id + " is damaged");
    out.source = *source;
    return out;
  });
}

Status RepoStore::UpdateRepoPoll(const RepoRecord& repo) {
  HW_PREPARE(q,
             "UPDATE repos SET state = ?2, state_detail = ?3, renamed_to = ?4, "
             "last_polled_at = ?5, consecutive_errors = ?6, last_reconciled_at = ?7, "
             "last_change_found_by = ?8, hub_downloads = ?9, hub_likes = ?10, hub_tags = ?11, "
             "hub_info_at = ?12, caught_up_at = ?13 "
             "WHERE id = ?1");
  std::optional<std::string> found_by;
  if (repo.last_change_found_by)
    found_by = std::string(PollTriggerName(*repo.last_change_found_by));
  const HubInfo& info = repo.hub_info;
  std::optional<std::string> tags;
  std::optional<int64_t> fetched_at;
  if (info.fetched_at > 0) {
    tags = ToJsonText(info.tags);
    fetched_at = info.fetched_at;
  }
  return q.Bind(1, repo.id)
      .Bind(2, RepoStateName(repo.state))
      .Bind(3, repo.state_detail)
      .BindOptional(4, repo.renamed_to)
      .Bind(5, repo.last_polled_at)
      .Bind(6, repo.consecutive_errors)
      .Bind(7, repo.last_reconciled_at)
      .BindOptional(8, found_by)
      .BindOptional(9, info.downloads)
      .BindOptional(10, info.likes)
      .BindOptional(11, tags)
      .BindOptional(12, fetched_at)
      .BindOptional(13, repo.caught_up_at ? std::optional<int64_t>(repo.caught_up_at)
                                          : std::nullopt)
      .Run("updating repo " + repo.id);
}

Status RepoStore::SetNextPoll(const std::string& repo, int64_t at) {
  HW_PREPARE(q, "UPDATE repos SET next_poll_at = ?2 WHERE id = ?1");
  return q.Bind(1, repo).Bind(2, at).Run("scheduling repo " + repo);
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

Result<std::map<std::string, int64_t>> RepoStore::ListingWatermarks() {
  HW_PREPARE(q, "SELECT source, covered_until FROM listing_watermarks");
  Result<std::vector<std::pair<std::string, int64_t>>> rows =
      Collect(q, "reading the listing watermarks",
              [](Statement& r) { return std::make_pair(r.Text(0), r.Int(1)); });
  if (!rows.ok()) return rows.error();
  return std::map<std::string, int64_t>(rows->begin(), rows->end());
}

Status RepoStore::SetListingWatermark(const std::string& source, int64_t covered_until,
                                      int64_t now) {
  HW_PREPARE(q,
             "INSERT INTO listing_watermarks (source, covered_until, updated_at) "
             "VALUES (?1, ?2, ?3) ON CONFLICT (source) DO UPDATE SET "
             "covered_until = excluded.covered_until, updated_at = excluded.updated_at");
  return q.Bind(1, source).Bind(2, covered_until).Bind(3, now).Run("moving a listing watermark");
}

}  // namespace hubwatch::store
