#include "daemon/api/api_context.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

#include "daemon/api/read_pool.h"
#include "daemon/service/store_access.h"
#include "estimator/base/json_nesting.h"
#include "tracker/advisory/osv.h"
#include "tracker/advisory/time_text.h"
#include "tracker/diff/change.h"
#include "tracker/hub/repo_id.h"
#include "tracker/store/pins.h"
#include "tracker/store/store.h"

namespace hubwatch::api {
namespace {

bool IsLowerHex(std::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

nlohmann::json TimeOrNull(int64_t unix_seconds) {
  return unix_seconds > 0 ? nlohmann::json(advisory::Rfc3339(unix_seconds)) : nlohmann::json();
}

}  // namespace

store::Store& ApiContext::reads() const {
  if (store::Store* worker = ReadPool::ThreadReads()) return *worker;
  return store->reads();
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  volatile unsigned char diff = a.size() != b.size() ? 1 : 0;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = diff | (x ^ y);
  }
  return diff == 0;
}

HttpReply StoreFailure(const Error& error) { return HttpReply::Error(500, error.message); }

HttpReply BadRequest(const std::string& message) { return HttpReply::Error(400, message); }

HttpReply FilterFailure(const Error& error) {
  return error.code == ErrorCode::kInvalidInput ? BadRequest(error.message) : StoreFailure(error);
}

std::optional<HttpReply> RepoFromParams(const PathParams& params, std::string* repo) {
  const auto ns = params.find("ns"), name = params.find("name");
  if (ns == params.end() || name == params.end()) return BadRequest("missing repo id");
  *repo = ns->second + "/" + name->second;
  if (Status s = hub::ValidateRepoId(*repo); !s.ok()) return BadRequest(s.error().message);
  return std::nullopt;
}

std::optional<HttpReply> RequireTrackedRepo(const ApiContext& ctx, const std::string& repo) {
  Result<std::optional<store::RepoRecord>> r = ctx.reads().repos().GetRepo(repo);
  if (!r.ok()) return StoreFailure(r.error());
  if (!r->has_value()) return HttpReply::Error(404, "repo " + repo + " is not tracked");
  return std::nullopt;
}

std::optional<HttpReply> ResolveRevision(const ApiContext& ctx, const std::string& repo,
                                         const std::string& text, std::string_view what,
                                         std::string* sha) {
  if (text.size() < 7 || text.size() > 40 || !IsLowerHex(text)) {
    return BadRequest(std::string(what) + " must be 7 to 40 lower-case hex digits of a revision");
  }
  Result<std::vector<std::string>> found = ctx.reads().queries().FindRevisionShas(repo, text, 2);
  if (!found.ok()) return StoreFailure(found.error());
  if (found->empty()) {
    return HttpReply::Error(404, "revision " + text + " of " + repo + " is not known");
  }
  if (found->size() > 1) {
    return BadRequest(std::string(what) + " " + text + " is ambiguous; give more digits");
  }
  *sha = found->front();
  return std::nullopt;
}

std::optional<HttpReply> CheckKind(const std::string& kind) {
  diff::ChangeKind parsed;
  if (diff::ParseKind(kind, parsed)) return std::nullopt;
  std::string all;
  for (int i = 0; i <= static_cast<int>(diff::ChangeKind::kError); ++i) {
    all +=
        (all.empty() ? "" : ", ") + std::string(diff::KindName(static_cast<diff::ChangeKind>(i)));
  }
  return BadRequest("unknown kind '" + kind.substr(0, 64) + "' (kinds: " + all + ")");
}

std::optional<HttpReply> ParseJsonBody(const HttpRequest& request, nlohmann::json* out) {
  if (JsonNestsDeeperThan(request.body)) {
    return BadRequest("the request body nests JSON deeper than " + std::to_string(kMaxJsonNesting) +
                      " levels");
  }
  if (JsonHasMoreValuesThan(request.body, kMaxBodyJsonValues)) {
    return BadRequest("the request body holds more than " + std::to_string(kMaxBodyJsonValues) +
                      " JSON values");
  }
  *out = nlohmann::json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) return BadRequest("the request body is not valid JSON");
  return std::nullopt;
}

std::string StringAt(const nlohmann::json& j, std::string_view pointer) {
  const nlohmann::json::json_pointer p{std::string(pointer)};
  if (!j.is_object() || !j.contains(p)) return "";
  const nlohmann::json& v = j.at(p);
  return v.is_string() ? v.get<std::string>() : "";
}

std::string BaseUrl(const ApiContext& ctx, const HttpRequest& request) {
  std::optional<std::string_view> host = request.header("host");
  bool ok = host && !host->empty() && host->size() <= 255;
  for (char c : host.value_or("")) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '.' || c == '-' || c == ':' || c == '[' ||
                         c == ']';
    ok = ok && allowed;
  }
  return "http://" + (ok ? std::string(*host) : ctx.config.listen);
}

nlohmann::json RepoJson(const store::RepoRecord& r) {
  nlohmann::json j = {
      {"id", r.id},
      {"refs", r.refs},
      {"state", store::RepoStateName(r.state)},
      {"state_detail", r.state_detail},
      {"added_at", TimeOrNull(r.added_at)},
      {"last_polled_at", TimeOrNull(r.last_polled_at)},
      {"next_poll_at", TimeOrNull(r.next_poll_at)},
      {"consecutive_errors", r.consecutive_errors},
      {"last_reconciled_at", TimeOrNull(r.last_reconciled_at)},
      {"last_change_found_by", r.last_change_found_by
                                   ? nlohmann::json(store::PollTriggerName(*r.last_change_found_by))
                                   : nlohmann::json(nullptr)},
  };
  if (r.renamed_to) j["renamed_to"] = *r.renamed_to;
  // A follow rule's repo: which rule, and whether it still matches (untracked: history kept).
  if (r.followed_by) j["followed_by"] = *r.followed_by;
  if (!r.tracked) j["tracked"] = false;
  return j;
}

Result<nlohmann::json> RepoWithPinsJson(store::Store& reads, const store::RepoRecord& repo) {
  nlohmann::json j = RepoJson(repo);
  Result<std::vector<store::PinStatus>> pins = store::PinStatuses(reads, repo);
  if (!pins.ok()) return pins.error();
  j["pins"] = nlohmann::json::array();
  for (const store::PinStatus& p : *pins) {
    auto text_or_null = [](const std::string& s) {
      return s.empty() ? nlohmann::json() : nlohmann::json(s);
    };
    j["pins"].push_back({{"pin", p.pin},
                         {"revision", text_or_null(p.sha)},
                         {"advisories", p.advisories},
                         {"newest", text_or_null(p.newest)},
                         {"current", p.current()},
                         {"problem", text_or_null(p.problem)}});
  }
  return j;
}

nlohmann::json RevisionJson(const store::RevisionRecord& r) {
  return {
      {"sha", r.sha},
      {"parents", r.parents},
      {"authored_at", r.authored_at},
      {"title", r.title},
      {"message", r.message},
      {"authors", r.authors},
      {"refs", r.refs},
      {"first_seen_at", TimeOrNull(r.first_seen_at)},
      {"rewritten_away", r.rewritten_away},
  };
}

nlohmann::json ChangeJson(const store::ChangeRecord& c) {
  return {
      {"id", c.id},
      {"revision", c.sha},
      {"ordinal", c.ordinal},
      {"kind", diff::KindName(c.change.kind)},
      {"impact", diff::ImpactName(c.change.impact)},
      {"path", c.change.path},
      {"summary", c.change.summary},
      {"details", c.change.details},
      {"committed_at", c.committed_at.empty() ? nlohmann::json() : nlohmann::json(c.committed_at)},
      {"created_at", TimeOrNull(c.created_at)},
  };
}

nlohmann::json AdvisoryEntryJson(const store::AdvisoryRecord& a) {
  nlohmann::json j = {
      {"id", a.id},
      {"seq", a.seq},
      {"repo", a.repo},
      {"revision", a.sha},
      {"kind", a.kind},
      {"impact", StringAt(a.osv, "/database_specific/impact")},
      {"summary", StringAt(a.osv, "/summary")},
      {"published", a.published},
      {"modified", a.modified},
  };
  if (a.withdrawn) j["withdrawn"] = *a.withdrawn;
  return j;
}

nlohmann::json FollowEventJson(const store::FollowEvent& e) {
  nlohmann::json j = {{"seq", e.seq},     {"kind", e.kind}, {"repo", e.repo},
                      {"rule", e.rule},   {"sha", e.sha},   {"at", advisory::Rfc3339(e.at)}};
  if (!e.reason.empty()) j["reason"] = e.reason;
  return j;
}

Router BuildRouter(const ApiContext& ctx) {
  Router router;
  RegisterRepoRoutes(router, ctx);
  RegisterDerivativeRoutes(router, ctx);
  RegisterBadgeRoutes(router, ctx);
  RegisterAdvisoryRoutes(router, ctx);
  RegisterOsvRoutes(router, ctx);
  RegisterPlanRoute(router, ctx);
  RegisterAdminRoutes(router, ctx);
  RegisterFollowRoutes(router, ctx);
  RegisterServiceRoutes(router, ctx);
  RegisterHubWebhookRoute(router, ctx);
  RegisterPageRoutes(router, ctx);
  return router;
}

}  // namespace hubwatch::api
