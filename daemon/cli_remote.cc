#include "daemon/cli_remote.h"

#include "estimator/base/text.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::cli {
namespace {

constexpr int kMaxPages = 1000;

std::string Str(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t Int(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

bool Bool(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

// The array at `key`, or an empty one.
const nlohmann::json& Array(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  const auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : kEmpty;
}

int64_t Time(const nlohmann::json& j, const char* key) {
  return advisory::ParseTime(Str(j, key)).value_or(0);
}

std::vector<std::string> Strings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

Result<store::ChangeRecord> ChangeFrom(const nlohmann::json& j, const std::string& repo) {
  store::ChangeRecord c;
  if (!j.is_object()) return Error::Io("--api: a change of " + Clip(repo) + " is not an object");
  c.id = Int(j, "id");
  c.repo = repo;
  c.sha = Str(j, "revision");
  c.ordinal = static_cast<int>(Int(j, "ordinal"));
  const std::optional<diff::Impact> impact = diff::ParseImpact(Str(j, "impact"));
  if (!diff::ParseKind(Str(j, "kind"), c.change.kind) || !impact) {
    return Error::Io("--api: a change of " + Clip(repo) + " is not one the API writes");
  }
  c.change.impact = *impact;
  c.change.path = Str(j, "path");
  c.change.summary = Str(j, "summary");
  if (const auto d = j.find("details"); d != j.end()) c.change.details = *d;
  c.created_at = Time(j, "created_at");
  c.committed_at = Str(j, "committed_at");
  return c;
}

Result<std::vector<store::ChangeRecord>> ChangesFrom(const nlohmann::json& list,
                                                     const std::string& repo) {
  std::vector<store::ChangeRecord> out;
  if (!list.is_array()) return out;
  for (const auto& j : list) {
    Result<store::ChangeRecord> c = ChangeFrom(j, repo);
    if (!c.ok()) return c.error();
    out.push_back(std::move(c).value());
  }
  return out;
}

std::string RepoPath(const std::string& repo) {
  return "/api/v1/repos/" + UrlEscape(repo, /*keep_slash=*/true);
}

// 404 for the repo itself: not tracked, an answer (exit 1) rather than bad input.
Error Untracked(const Error& e, const std::string& repo) {
  if (e.message.find("is not tracked") == std::string::npos) return e;
  return Error::Unsupported(Clip(repo) + " is not tracked by the daemon at --api");
}

}  // namespace

Result<std::vector<store::ChangeRecord>> RemoteChanges(ApiClient& api, const std::string& repo,
                                                       const std::string& since,
                                                       const std::string& kind) {
  std::string target = RepoPath(repo) + "/changes?limit=1000";
  if (!since.empty()) target += "&since=" + UrlEscape(since);
  if (!kind.empty()) target += "&kind=" + UrlEscape(kind);
  Result<nlohmann::json> body = api.Get(target);
  if (!body.ok()) return Untracked(body.error(), repo);
  if (Bool(*body, "truncated")) {
    return Error::Unsupported("--api: more than 1000 changes match; narrow with --since or --kind");
  }
  return ChangesFrom(Array(*body, "changes"), repo);
}

Result<std::vector<store::AdvisoryRecord>> RemoteAdvisories(ApiClient& api,
                                                            const RemoteAdvisoryQuery& q) {
  std::string filters;
  for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"repo", &q.repo},
                                    {"kind", &q.kind},
                                    {"since", &q.since},
                                    {"affects", &q.affects}}) {
    if (!value->empty()) filters += std::string("&") + name + "=" + UrlEscape(*value);
  }
  std::vector<store::AdvisoryRecord> out;
  int64_t after = 0;
  for (int page = 0; page < kMaxPages; ++page) {
    Result<nlohmann::json> body =
        api.Get("/api/v1/advisories?limit=1000&after=" + std::to_string(after) + filters);
    if (!body.ok()) return body.error();
    for (const auto& entry : Array(*body, "advisories")) {
      if (!entry.is_object()) return Error::Io("--api: an advisory is not an object");
      store::AdvisoryRecord a;
      a.id = Str(entry, "id");
      a.seq = Int(entry, "seq");
      a.repo = Str(entry, "repo");
      a.sha = Str(entry, "revision");
      a.kind = Str(entry, "kind");
      a.published = Str(entry, "published");
      a.modified = Str(entry, "modified");
      if (entry.contains("withdrawn")) a.withdrawn = Str(entry, "withdrawn");
      Result<nlohmann::json> osv = api.Get("/v1/vulns/" + UrlEscape(a.id));
      if (!osv.ok()) return osv.error();
      a.osv = std::move(osv).value();
      out.push_back(std::move(a));
    }
    if (!body->contains("next_after")) return out;
    after = Int(*body, "next_after");
  }
  return out;
}

Result<std::vector<RevisionWithChanges>> RemoteHistory(ApiClient& api, const std::string& repo) {
  std::vector<RevisionWithChanges> out;
  std::string before;
  for (int page = 0; page < kMaxPages; ++page) {
    Result<nlohmann::json> body = api.Get(RepoPath(repo) + "/revisions?limit=1000" +
                                          (before.empty() ? "" : "&before=" + before));
    if (!body.ok()) return Untracked(body.error(), repo);
    for (const auto& j : Array(*body, "revisions")) {
      if (!j.is_object()) {
        return Error::Io("--api: a revision of " + Clip(repo) + " is not an object");
      }
      RevisionWithChanges r;
      r.revision = {.repo = repo,
                    .sha = Str(j, "sha"),
                    .parents = Strings(j, "parents"),
                    .authored_at = Str(j, "authored_at"),
                    .title = Str(j, "title"),
                    .message = Str(j, "message"),
                    .authors = Strings(j, "authors"),
                    .refs = Strings(j, "refs"),
                    .first_seen_at = Time(j, "first_seen_at"),
                    .rewritten_away = Bool(j, "rewritten_away")};
      Result<nlohmann::json> one =
          api.Get(RepoPath(repo) + "/revisions/" + UrlEscape(r.revision.sha));
      if (!one.ok()) return one.error();
      Result<std::vector<store::ChangeRecord>> changes =
          ChangesFrom(Array(*one, "changes"), repo);
      if (!changes.ok()) return changes.error();
      r.changes = std::move(changes).value();
      out.push_back(std::move(r));
    }
    if (!body->contains("next_before")) return out;
    before = Str(*body, "next_before");
  }
  return out;
}

}  // namespace hubwatch::cli
