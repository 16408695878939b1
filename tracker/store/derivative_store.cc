// Derivatives: their checks and their lags on upstream's fixes (the advisories of those that
// lag are derivative_advisories.cc's).

#include "tracker/store/derivative_store.h"

#include <nlohmann/json.hpp>

#include "tracker/store/connection.h"

namespace hubwatch::store {

using derivatives::AdvisoryLag;
using derivatives::DerivativeCheck;
using derivatives::DerivativeRecord;
using derivatives::LagCounts;
using derivatives::LagStatus;
using derivatives::UpstreamFix;

namespace {

// An upstream advisory as a fix to check against, with the upstream change (kind, impact, path,
// summary) that publishing a derivative's advisory for it needs beside.
struct FixRow {
  UpstreamFix fix;
  diff::Change change;
};

// ?1 = the upstream repo. The change must be the advisory repo's own (a derivative advisory's
// change is its upstream's).
#define HW_FIX_COLUMNS                                                                      \
  "SELECT a.id, a.change_id, c.kind, c.path, a.sha, r.parents, a.osv, c.impact, c.summary " \
  "FROM advisories a JOIN changes c ON c.id = a.change_id AND c.repo = a.repo "             \
  "LEFT JOIN revisions r ON r.repo = a.repo AND r.sha = a.sha WHERE a.repo = ?1 "

#define HW_FIX_FILTER                                                                 \
  "AND a.withdrawn IS NULL AND c.impact IN ('behavioral', 'breaking') AND c.kind IN " \
  "('config', 'generation_config', 'tokenizer', 'chat_template', 'special_tokens') "
constexpr const char kFixes[] = HW_FIX_COLUMNS HW_FIX_FILTER "ORDER BY a.seq";
constexpr const char kFix[] = HW_FIX_COLUMNS "AND a.id = ?2";
#undef HW_FIX_COLUMNS

// The seq of ?1's newest fix (0: none), as a scalar subquery.
#define HW_NEWEST_FIX                                                                       \
  "(SELECT COALESCE(MAX(a.seq), 0) FROM advisories a JOIN changes c ON c.id = a.change_id " \
  "AND c.repo = a.repo WHERE a.repo = ?1 " HW_FIX_FILTER ")"
// Whether derivative row `d` is current: read once, its lags covering ?1's newest fix.
#define HW_CURRENT "(d.head <> '' AND d.fixes_through >= " HW_NEWEST_FIX ")"

constexpr const char kNewestFix[] = "SELECT " HW_NEWEST_FIX;
constexpr const char kDerivativeColumns[] =
    "SELECT d.upstream, d.id, d.relation, d.head, d.last_modified, d.listed_at, d.checked_at, "
    "d.facets, d.error, d.downloads, d.likes, d.created_at, d.fixes_through, " HW_CURRENT
    " FROM derivatives d ";

std::string SummaryOf(const nlohmann::json& osv) {
  const auto it = osv.is_object() ? osv.find("summary") : osv.end();
  return it != osv.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<DerivativeRecord> ReadDerivative(const Statement& q) {
  DerivativeRecord r;
  r.upstream = q.Text(0);
  r.id = q.Text(1);
  const std::optional<derivatives::Relation> relation = derivatives::ParseRelation(q.Text(2));
  if (!relation) {
    return Error::Io("store: derivative " + r.id + " is damaged: unknown relation");
  }
  r.relation = *relation;
  r.head = q.Text(3);
  r.last_modified = q.Text(4);
  r.listed_at = q.Int(5);
  r.checked_at = q.Int(6);
  r.facets_json = q.Text(7);
  r.error = q.Text(8);
  r.signals = {q.Int(9), q.Int(10), q.Text(11)};
  r.fixes_through = q.Int(12);
  r.current = q.Int(13) != 0;
  return r;
}

struct LagRow {
  std::string derivative;
  AdvisoryLag lag;
};

Result<LagRow> ReadLag(const Statement& q) {
  LagRow r{q.Text(0), {q.Text(1), LagStatus::kNotApplicable, q.Text(3)}};
  const std::optional<LagStatus> status = derivatives::ParseLagStatus(q.Text(2));
  if (!status) {
    return Error::Io("store: a lag of derivative " + r.derivative + " is damaged: unknown status");
  }
  r.lag.status = *status;
  return r;
}

Result<FixRow> ReadFixRow(const Statement& q) {
  FixRow r;
  r.fix.advisory_id = q.Text(0);
  r.fix.change_id = q.Int(1);
  r.fix.kind = q.Text(2);
  r.fix.path = q.Text(3);
  r.fix.sha = q.Text(4);
  if (!q.IsNull(5)) {
    Result<std::vector<std::string>> parents =
        StoredStringList(q.Text(5), "the parents of revision " + r.fix.sha);
    if (!parents.ok()) return parents.error();
    if (!parents->empty()) r.fix.parent_sha = parents->front();
  }
  Result<nlohmann::json> osv = StoredJson(q.Text(6), "advisory " + r.fix.advisory_id);
  if (!osv.ok()) return osv.error();
  r.fix.summary = SummaryOf(*osv);
  const std::optional<diff::Impact> impact = diff::ParseImpact(q.Text(7));
  if (!diff::ParseKind(r.fix.kind, r.change.kind) || !impact) {
    return Error::Io("store: the change of advisory " + r.fix.advisory_id + " is damaged");
  }
  r.change.impact = *impact;
  r.change.path = r.fix.path;
  r.change.summary = q.Text(8);
  return r;
}

// Adds `n` lags shown as `status` (a LagStatus name or "unchecked") to `c`; false when the
// status is neither.
bool CountLag(LagCounts& c, const std::string& status, int64_t n) {
  if (status == "unchecked") {
    c.unchecked += n;
    return true;
  }
  const std::optional<LagStatus> parsed = derivatives::ParseLagStatus(status);
  if (!parsed) return false;
  switch (*parsed) {
    case LagStatus::kFixed:
      c.fixed += n;
      break;
    case LagStatus::kLagging:
      c.lagging += n;
      break;
    case LagStatus::kDiverged:
      c.diverged += n;
      break;
    case LagStatus::kNotApplicable:
      c.not_applicable += n;
      break;
  }
  return true;
}

// The advisory `id` of `upstream` as a fix; nullopt when `upstream` has no such advisory.
Result<std::optional<FixRow>> ReadFix(Database& db_, const std::string& upstream,
                                      const std::string& id) {
  HW_PREPARE(q, kFix);
  q.Bind(1, upstream).Bind(2, id);
  return OptionalRow(q, "reading an upstream fix", ReadFixRow);
}

}  // namespace

Result<std::vector<UpstreamFix>> DerivativeStore::UpstreamFixes(const std::string& upstream) {
  HW_PREPARE(q, kFixes);
  q.Bind(1, upstream);
  Result<std::vector<FixRow>> rows = Collect(q, "listing upstream fixes", ReadFixRow);
  if (!rows.ok()) return rows.error();
  std::vector<UpstreamFix> out;
  out.reserve(rows->size());
  for (FixRow& r : *rows) out.push_back(std::move(r.fix));
  return out;
}

Result<int64_t> DerivativeStore::NewestFixSeq(const std::string& upstream) {
  HW_PREPARE(q, kNewestFix);
  Result<bool> row = q.Bind(1, upstream).Step("finding upstream's newest fix");
  if (!row.ok()) return row.error();
  return *row ? q.Int(0) : 0;
}

Status DerivativeStore::UpsertRow(const DerivativeCheck& check, int64_t now) {
  // With an error the head and facets stay those the kept lags were read at.
  // ?10: the fixes its lags cover (NULL: every fix now); 0 for an unread new row.
  static const std::string sql =
      "INSERT INTO derivatives (upstream, id, relation, head, last_modified, listed_at, "
      "checked_at, facets, error, fixes_through, downloads, likes, created_at) VALUES (?1, ?2, "
      "?3, ?4, ?5, ?6, ?7, ?8, ?9, CASE WHEN ?9 = '' THEN COALESCE(?10, " HW_NEWEST_FIX
      ") ELSE 0 END, COALESCE(?11, 0), COALESCE(?12, 0), COALESCE(?13, '')) "
      "ON CONFLICT (upstream, id) DO UPDATE SET relation = excluded.relation, "
      "last_modified = excluded.last_modified, listed_at = excluded.listed_at, "
      "checked_at = excluded.checked_at, error = excluded.error, "
      "head = CASE WHEN excluded.error = '' THEN excluded.head ELSE head END, "
      "facets = CASE WHEN excluded.error = '' THEN excluded.facets ELSE facets END, "
      "fixes_through = CASE WHEN excluded.error = '' THEN excluded.fixes_through "
      "ELSE fixes_through END, downloads = COALESCE(?11, downloads), "
      "likes = COALESCE(?12, likes), created_at = COALESCE(?13, created_at)";
  HW_PREPARE(q, sql);
  const bool read = check.error.empty();
  const std::string facets = !read || check.facets_json.empty() ? "{}" : check.facets_json;
  const std::optional<derivatives::Signals>& signals = check.signals;
  return q.Bind(1, check.upstream)
      .Bind(2, check.id)
      .Bind(3, derivatives::RelationName(check.relation))
      .Bind(4, read ? check.head : std::string())
      .Bind(5, check.last_modified)
      .Bind(6, now)
      .Bind(7, check.checked_at)
      .Bind(8, facets)
      .Bind(9, check.error)
      .BindOptional(10, check.fixes_through)
      .BindOptional(11, signals ? std::optional<int64_t>(signals->downloads) : std::nullopt)
      .BindOptional(12, signals ? std::optional<int64_t>(signals->likes) : std::nullopt)
      .BindOptional(13, signals ? std::optional<std::string>(signals->created_at) : std::nullopt)
      .Run("recording derivative " + check.id);
}

Status DerivativeStore::RecordCheck(const DerivativeCheck& check, int64_t now,
                                    const DerivativeTargets& targets) {
  return db_.Atomically([&]() -> Status {
    HW_TRY(UpsertRow(check, now));
    if (!check.error.empty()) return Status::Ok();  // the old lags stand
    HW_PREPARE(d, "DELETE FROM derivative_lags WHERE upstream = ?1 AND derivative = ?2");
    HW_TRY(d.Bind(1, check.upstream).Bind(2, check.id).Run("replacing derivative lags"));
    for (const AdvisoryLag& lag : check.lags) {
      Result<std::optional<FixRow>> fix = ReadFix(db_, check.upstream, lag.advisory_id);
      if (!fix.ok()) return fix.error();
      if (!fix->has_value()) {
        return Error::InvalidInput("store: " + lag.advisory_id.substr(0, 80) +
                                   " is no advisory of " + check.upstream);
      }
      Result<std::string> own =
          advisories_.Settle(check, lag, (*fix)->fix, (*fix)->change, now, targets);
      if (!own.ok()) return own.error();
      HW_PREPARE(q,
                 "INSERT INTO derivative_lags (upstream, derivative, advisory_id, status, "
                 "derivative_advisory_id, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
                 "ON CONFLICT DO UPDATE SET status = excluded.status, "
                 "derivative_advisory_id = excluded.derivative_advisory_id");
      HW_TRY(q.Bind(1, check.upstream)
                 .Bind(2, check.id)
                 .Bind(3, lag.advisory_id)
                 .Bind(4, derivatives::LagStatusName(lag.status))
                 .BindOptional(5, own->empty() ? std::nullopt : std::optional<std::string>(*own))
                 .Bind(6, now)
                 .Run("recording a derivative lag"));
    }
    return Status::Ok();
  });
}

Status DerivativeStore::MarkListed(const std::string& upstream,
                                   const std::vector<DerivativeSighting>& seen, int64_t now) {
  return db_.Atomically([&]() -> Status {
    for (const DerivativeSighting& s : seen) {
      HW_PREPARE(q,
                 "UPDATE derivatives SET listed_at = ?3, downloads = COALESCE(?4, downloads), "
                 "likes = COALESCE(?5, likes), created_at = COALESCE(?6, created_at), "
                 "fixes_through = COALESCE(?7, fixes_through) WHERE upstream = ?1 AND id = ?2");
      const std::optional<derivatives::Signals>& g = s.signals;
      HW_TRY(q.Bind(1, upstream)
                 .Bind(2, s.id)
                 .Bind(3, now)
                 .BindOptional(4, g ? std::optional<int64_t>(g->downloads) : std::nullopt)
                 .BindOptional(5, g ? std::optional<int64_t>(g->likes) : std::nullopt)
                 .BindOptional(6, g ? std::optional<std::string>(g->created_at) : std::nullopt)
                 .BindOptional(7, s.fixes_through)
                 .Run("marking a derivative listed"));
    }
    return Status::Ok();
  });
}

Status DerivativeStore::Forget(const std::string& upstream, const std::string& id) {
  HW_PREPARE(q, "DELETE FROM derivatives WHERE upstream = ?1 AND id = ?2");
  return q.Bind(1, upstream).Bind(2, id).Run("forgetting a derivative");
}

Result<std::vector<AdvisoryLag>> DerivativeStore::LagsOf(const std::string& upstream,
                                                         const std::string& id) {
  HW_PREPARE(q,
             "SELECT derivative, advisory_id, status, COALESCE(derivative_advisory_id, '') FROM "
             "derivative_lags WHERE upstream = ?1 AND derivative = ?2 ORDER BY advisory_id");
  q.Bind(1, upstream).Bind(2, id);
  Result<std::vector<LagRow>> rows = Collect(q, "reading derivative lags", ReadLag);
  if (!rows.ok()) return rows.error();
  std::vector<AdvisoryLag> out;
  for (LagRow& r : *rows) out.push_back(std::move(r.lag));
  return out;
}

Result<std::vector<DerivativeRecord>> DerivativeStore::List(const std::string& upstream) {
  static const std::string sql =
      std::string(kDerivativeColumns) + "WHERE d.upstream = ?1 ORDER BY d.id";
  HW_PREPARE(q, sql);
  q.Bind(1, upstream);
  Result<std::vector<DerivativeRecord>> list = Collect(q, "listing derivatives", ReadDerivative);
  if (!list.ok()) return list.error();
  HW_PREPARE(l,
             "SELECT derivative, advisory_id, status, COALESCE(derivative_advisory_id, '') FROM "
             "derivative_lags WHERE upstream = ?1 ORDER BY derivative, advisory_id");
  l.Bind(1, upstream);
  Result<std::vector<LagRow>> lags = Collect(l, "reading derivative lags", ReadLag);
  if (!lags.ok()) return lags.error();
  size_t next = 0;  // both are by derivative id
  for (DerivativeRecord& d : *list) {
    while (next < lags->size() && (*lags)[next].derivative < d.id) ++next;
    for (; next < lags->size() && (*lags)[next].derivative == d.id; ++next) {
      d.lags.push_back(std::move((*lags)[next].lag));
    }
  }
  return list;
}

Result<std::optional<DerivativeRecord>> DerivativeStore::Get(const std::string& upstream,
                                                             const std::string& id) {
  static const std::string sql =
      std::string(kDerivativeColumns) + "WHERE d.upstream = ?1 AND d.id = ?2";
  HW_PREPARE(q, sql);
  q.Bind(1, upstream).Bind(2, id);
  Result<std::optional<DerivativeRecord>> r =
      OptionalRow(q, "reading a derivative", ReadDerivative);
  if (!r.ok() || !r->has_value()) return r;
  Result<std::vector<AdvisoryLag>> lags = LagsOf(upstream, id);
  if (!lags.ok()) return lags.error();
  (*r)->lags = std::move(lags).value();
  return r;
}

Result<std::map<std::string, LagCounts>> DerivativeStore::CountsByAdvisory(
    const std::string& upstream) {
  // A lag of a derivative that is not current counts as unchecked.
  HW_PREPARE(q, "SELECT l.advisory_id, CASE WHEN " HW_CURRENT
                " THEN l.status ELSE 'unchecked' END "
                "AS shown, COUNT(*) FROM derivative_lags l JOIN derivatives d ON "
                "d.upstream = l.upstream AND d.id = l.derivative WHERE l.upstream = ?1 "
                "GROUP BY l.advisory_id, shown");
  q.Bind(1, upstream);
  std::map<std::string, LagCounts> out;
  while (true) {
    Result<bool> row = q.Step("counting derivative lags");
    if (!row.ok()) return row.error();
    if (!*row) return out;
    if (!CountLag(out[q.Text(0)], q.Text(1), q.Int(2))) {
      return Error::Io("store: a derivative lag is damaged: unknown status");
    }
  }
}

Result<DerivativeTally> DerivativeStore::Tally(const std::string& upstream) {
  // Each current derivative's worst lag: 3 lagging, 2 diverged, 1 fixed, 0 not_applicable or
  // none; -1: not current (unchecked).
  HW_PREPARE(q,
             "SELECT COUNT(*), COALESCE(SUM(worst >= 0), 0), COALESCE(SUM(worst = 3), 0), "
             "COALESCE(SUM(worst = 1), 0), COALESCE(SUM(worst = 2), 0), "
             "COALESCE(SUM(worst = 0), 0), COALESCE(SUM(worst < 0), 0) FROM (SELECT CASE WHEN "
             "NOT " HW_CURRENT
             " THEN -1 ELSE COALESCE((SELECT MAX(CASE l.status WHEN 'lagging' "
             "THEN 3 WHEN 'diverged' THEN 2 WHEN 'fixed' THEN 1 ELSE 0 END) FROM derivative_lags "
             "l WHERE l.upstream = d.upstream AND l.derivative = d.id), 0) END AS worst "
             "FROM derivatives d WHERE d.upstream = ?1)");
  Result<bool> row = q.Bind(1, upstream).Step("tallying derivatives");
  if (!row.ok()) return row.error();
  if (!*row) return DerivativeTally{};
  return DerivativeTally{q.Int(0), q.Int(1), q.Int(2), q.Int(3), q.Int(4), q.Int(5), q.Int(6)};
}

#undef HW_CURRENT
#undef HW_NEWEST_FIX
#undef HW_FIX_FILTER

}  // namespace hubwatch::store
