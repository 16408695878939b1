#include "tests/fakehub/hub_state.h"

#include <algorithm>
#include <nlohmann/json.hpp>
// GCC 12 reports a false -Wmaybe-uninitialized inside <regex> under -fsanitize (GCC PR 105562).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop
#else
#include <regex>
#endif

#include "tests/fakehub/hashing.h"
#include "tracker/hub/url.h"

namespace hubwatch::fakehub {
namespace {

using nlohmann::json;

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

FakeResponse PlainJson(int status, const json& body) { return JsonBody(status, body.dump()); }

}  // namespace

std::optional<std::string> FakeRequest::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (IEquals(n, name)) return v;
  }
  return std::nullopt;
}

void FakeResponse::Set(std::string name, std::string value) {
  std::erase_if(headers, [&](const auto& h) { return IEquals(h.first, name); });
  headers.emplace_back(std::move(name), std::move(value));
}

std::string PercentDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() &&
        std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string PercentEncode(std::string_view text, bool keep_slash) {
  return keep_slash ? hub::EncodePath(text) : hub::EncodeComponent(text);
}

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> segments;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) segments.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return segments;
}

FakeResponse JsonBody(int status, std::string body) {
  FakeResponse r;
  r.status = status;
  r.body = std::move(body);
  r.Set("Content-Type", "application/json; charset=utf-8");
  return r;
}

FakeResponse JsonError(int status, const std::string& code, const std::string& message) {
  FakeResponse r = PlainJson(status, json{{"error", message}});
  if (!code.empty()) r.Set("X-Error-Code", code);
  r.Set("X-Error-Message", message);
  return r;
}

HubState::HubState(FakeHubOptions options, std::vector<Repo> repos)
    : options_(std::move(options)), repos_(std::move(repos)) {
  int64_t earliest = INT64_MAX;
  for (const Repo& repo : repos_) {
    for (const Commit& c : repo.commits) {
      earliest = std::min(earliest, c.time);
      for (const auto& [path, blob] : *c.files) {
        if (blob->is_lfs()) blobs_by_sha256_[blob->sha256] = blob;
      }
    }
  }
  replay_start_ = options_.replay_start.value_or(earliest == INT64_MAX ? 0 : earliest);
  churn_.per_minute = options_.churn_per_minute;
  churn_.repos = options_.churn_repos;
  churn_.owners = options_.churn_owners;
  churn_pool_ = MakeChurnPool(churn_);
  for (const Repo& repo : repos_) notified_head_.push_back(MainHead(repo));
}

void HubState::SetOrigins(std::string hub, std::string cdn) {
  std::lock_guard lock(mutex_);
  hub_origin_ = std::move(hub);
  cdn_origin_ = std::move(cdn);
}

int64_t HubState::ReplayNow() const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  return replay_start_ + replay_offset_ + static_cast<int64_t>(elapsed * options_.speed);
}

int64_t HubState::WallNow() const {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t HubState::ChurnNow() const {
  return options_.mode == Mode::kReplay ? ReplayNow() : WallNow() + replay_offset_;
}

int64_t HubState::CommitNow() const {
  return options_.mode == Mode::kReplay ? ReplayNow() : WallNow();
}

bool HubState::Visible(const Repo& repo, int commit) const {
  if (commit < 0) return false;
  return options_.mode == Mode::kStatic ||
         repo.commits[static_cast<size_t>(commit)].time <= ReplayNow();
}

int HubState::MainHead(const Repo& repo) const {
  if (repo.main_override >= 0) return repo.main_override;
  for (auto it = repo.main_history.rbegin(); it != repo.main_history.rend(); ++it) {
    if (Visible(repo, *it)) return *it;
  }
  return -1;
}

int HubState::ResolveRevision(const Repo& repo, const std::string& rev) const {
  std::string name = rev;
  if (name == "HEAD" || name == "main" || name == "refs/heads/main") return MainHead(repo);
  bool tag_only = false, branch_only = false;
  if (name.starts_with("refs/heads/")) {
    name = name.substr(11);
    branch_only = true;
  } else if (name.starts_with("refs/tags/")) {
    name = name.substr(10);
    tag_only = true;
  }
  if (!tag_only) {
    if (auto it = repo.branches.find(name);
        it != repo.branches.end() && Visible(repo, it->second)) {
      return it->second;
    }
  }
  if (!branch_only) {
    if (auto it = repo.tag_refs.find(name);
        it != repo.tag_refs.end() && Visible(repo, it->second)) {
      return it->second;
    }
  }
  if (name.size() == 40) {
    for (size_t i = 0; i < repo.commits.size(); ++i) {
      if (repo.commits[i].id == name && Visible(repo, static_cast<int>(i)))
        return static_cast<int>(i);
    }
  }
  return -1;
}

Repo* HubState::FindRepoById(const std::string& id) {
  for (Repo& repo : repos_) {
    if (!repo.deleted && repo.id == id) return &repo;
  }
  return nullptr;
}

void HubState::BuildIdIndex() {
  id_index_.clear();
  for (size_t i = 0; i < repos_.size(); ++i) {
    id_index_[repos_[i].id].push_back(i);
    for (const std::string& old : repos_[i].renamed_from) id_index_[old].push_back(i);
  }
}

HubState::RepoMatch HubState::FindRepo(const std::vector<std::string>& segments, size_t first) {
  RepoMatch match;
  auto matches = [this](const Repo& repo, const std::string& id) {
    if (repo.deleted || MainHead(repo) < 0) return false;
    return repo.id == id || std::find(repo.renamed_from.begin(), repo.renamed_from.end(), id) !=
                                repo.renamed_from.end();
  };
  for (size_t n : {size_t{2}, size_t{1}}) {
    if (first + n > segments.size()) continue;
    std::string id = PercentDecode(segments[first]);
    if (n == 2) id += "/" + PercentDecode(segments[first + 1]);
    Repo* found = nullptr;
    if (auto hit = id_index_.find(id); hit != id_index_.end()) {
      for (size_t i : hit->second) {
        if (i < repos_.size() && matches(repos_[i], id)) {
          found = &repos_[i];
          break;
        }
      }
    }
    if (!found) {
      for (Repo& repo : repos_) {
        if (matches(repo, id)) {
          found = &repo;
          BuildIdIndex();  // it had changed since the index was built
          break;
        }
      }
    }
    if (found) {
      match.repo = found;
      match.requested_id = id;
      match.segments = n;
      return match;
    }
  }
  return match;
}

std::optional<FakeResponse> HubState::AccessError(const Repo* repo, const std::string& requested_id,
                                                  const Caller& caller, bool content) const {
  if (repo == nullptr || (repo->is_private && caller.user == nullptr)) {
    if (caller.user == nullptr) {
      FakeResponse r = JsonError(401, "", "Invalid username or password.");
      r.Set("WWW-Authenticate", "Bearer realm=\"Authentication required\", charset=\"UTF-8\"");
      return r;
    }
    return JsonError(404, "RepoNotFound", "Repository not found");
  }
  if (repo->disabled) return JsonError(403, "", "Access to this resource is disabled.");
  if (content && repo->gated) {
    if (caller.user == nullptr) {
      return JsonError(401, "GatedRepo",
                       "Access to model " + requested_id +
                           " is restricted. You must have access to it and be authenticated to "
                           "access it. Please log in.");
    }
    if (!caller.user->approved_for_gated) {
      return JsonError(403, "GatedRepo",
                       "Access to model " + requested_id +
                           " is restricted and you are not in the authorized list. Visit "
                           "https://huggingface.co/" +
                           requested_id + " to ask for access.");
    }
  }
  return std::nullopt;
}

FakeResponse HubState::RenameRedirect(const FakeRequest& request, const RepoMatch& match) const {
  const std::string old_encoded = match.requested_id;
  std::string location = request.path;
  const size_t at = location.find(old_encoded);
  location.replace(at == std::string::npos ? 0 : at, old_encoded.size(), match.repo->id);
  if (!request.query.empty()) location += "?" + request.query;
  FakeResponse r;
  r.status = 307;
  r.Set("Location", location);
  r.Set("Content-Type", "text/plain; charset=utf-8");
  r.body = "Temporary Redirect. Redirecting to " + location;
  return r;
}

FakeResponse HubState::Route(const FakeRequest& request, const Caller& caller) {
  const std::vector<std::string> seg = SplitPath(request.path);
  Query query;
  {
    std::string_view q = request.query;
    while (!q.empty()) {
      const size_t amp = q.find('&');
      const std::string_view item = q.substr(0, amp);
      const size_t eq = item.find('=');
      auto decode = [](std::string_view v) {
        std::string plus(v);
        std::replace(plus.begin(), plus.end(), '+', ' ');
        return PercentDecode(plus);
      };
      std::string key = decode(item.substr(0, eq));
      if (key.ends_with("[]")) key.resize(key.size() - 2);
      query.emplace(key, eq == std::string_view::npos ? "" : decode(item.substr(eq + 1)));
      if (amp == std::string_view::npos) break;
      q.remove_prefix(amp + 1);
    }
  }
  if (caller.bad_token) return JsonError(401, "", "Invalid credentials in Authorization header");
  auto not_found_page = [] {
    return JsonError(404, "", "Sorry, we can't find the page you are looking for.");
  };
  auto join_decoded = [&](size_t from) {
    std::string path;
    for (size_t i = from; i < seg.size(); ++i) path += (path.empty() ? "" : "/") + seg[i];
    return PercentDecode(path);
  };
  auto revision_error = [](const std::string& rev) {
    return JsonError(404, "RevisionNotFound", "Invalid rev id: " + rev);
  };

  if (seg.size() == 2 && seg[0] == "api" && seg[1] == "models") {
    return ListModels(request, query, caller.user != nullptr);
  }

  if (seg.size() >= 3 && seg[0] == "api" && seg[1] == "models") {
    RepoMatch match = FindRepo(seg, 2);
    if (auto denied = AccessError(match.repo, match.requested_id, caller, false)) return *denied;
    if (match.requested_id != match.repo->id) return RenameRedirect(request, match);
    const Repo& repo = *match.repo;
    const size_t rest = 2 + match.segments;
    const size_t n = seg.size() - rest;
    if (n == 0) return ModelInfo(request, repo, MainHead(repo), query);
    const std::string& what = seg[rest];
    if ((what == "revision" || what == "commits") && n == 2) {
      const std::string rev = PercentDecode(seg[rest + 1]);
      const int commit = ResolveRevision(repo, rev);
      if (commit < 0) return revision_error(rev);
      return what == "revision" ? ModelInfo(request, repo, commit, query)
                                : Commits(request, repo, seg[rest + 1], commit, query);
    }
    if (what == "tree" && n >= 2) {
      const std::string rev = PercentDecode(seg[rest + 1]);
      const int commit = ResolveRevision(repo, rev);
      if (commit < 0) return revision_error(rev);
      return Tree(request, repo, seg[rest + 1], commit, join_decoded(rest + 2), query);
    }
    if (what == "refs" && n == 1) return Refs(request, repo, query);
    return not_found_page();
  }

  if (seg.size() >= 5 && seg[0] == "api" && seg[1] == "resolve-cache" && seg[2] == "models") {
    RepoMatch match = FindRepo(seg, 3);
    if (auto denied = AccessError(match.repo, match.requested_id, caller, true)) return *denied;
    const size_t rest = 3 + match.segments;
    if (seg.size() < rest + 2) return not_found_page();
    const int commit = ResolveRevision(*match.repo, PercentDecode(seg[rest]));
    if (commit < 0) return revision_error(PercentDecode(seg[rest]));
    return ResolveCache(request, *match.repo, commit, join_decoded(rest + 1));
  }

  RepoMatch match = FindRepo(seg, 0);
  const size_t rest = match.segments;
  if (seg.size() >= rest + 3 && (seg[rest] == "resolve" || seg[rest] == "raw")) {
    if (auto denied = AccessError(match.repo, match.requested_id, caller, true)) return *denied;
    if (match.requested_id != match.repo->id) return RenameRedirect(request, match);
    const std::string rev = PercentDecode(seg[rest + 1]);
    const int commit = ResolveRevision(*match.repo, rev);
    if (commit < 0) return revision_error(rev);
    const std::string path = join_decoded(rest + 2);
    return seg[rest] == "raw" ? Raw(request, *match.repo, commit, path)
                              : Resolve(request, *match.repo, seg[rest + 1], commit, path);
  }
  if (match.repo == nullptr && seg.size() >= 3 &&
      std::find(seg.begin(), seg.end(), "resolve") != seg.end()) {
    return *AccessError(nullptr, "", caller, true);
  }
  return not_found_page();
}

std::optional<FakeResponse> HubState::ApplyFault(const FakeRequest& request, FaultRule** modifier) {
  for (FaultRule& rule : faults_) {
    if (rule.times == 0) continue;
    if (rule.server != "any" && rule.server != request.server) continue;
    if (!rule.method.empty() && !IEquals(rule.method, request.method)) continue;
    if (!rule.path_regex.empty() && !std::regex_search(request.path, std::regex(rule.path_regex))) {
      continue;
    }
    if (rule.times > 0) --rule.times;
    FakeResponse r;
    switch (rule.action) {
      case FaultAction::kStatus:
        return JsonError(rule.status, "",
                         "Internal Error - We're working hard to fix this as soon as possible!");
      case FaultAction::kRateLimit:
        r = JsonError(429, "", "You have exceeded our rate limit.");
        r.Set("RateLimit",
              "\"" + std::string(request.path.starts_with("/api/") ? "api" : "resolvers") +
                  "\";r=0;t=" + std::to_string(rule.reset_seconds));
        return r;
      case FaultAction::kRetryAfter:
        r = JsonError(rule.status, "", "Too Many Requests");
        r.Set("Retry-After", rule.retry_after);
        return r;
      case FaultAction::kReset:
        r.status = 0;
        r.wire = WireFault::kReset;
        return r;
      case FaultAction::kRedirectOffHost:
        r.status = 302;
        r.Set("Location",
              cdn_origin_ + request.path + (request.query.empty() ? "" : "?" + request.query));
        return r;
      default:
        *modifier = &rule;
        return std::nullopt;
    }
  }
  return std::nullopt;
}

void HubState::AddRateLimitHeaders(const FakeRequest& request, FakeResponse& response, bool* over) {
  const auto now = std::chrono::steady_clock::now();
  const auto window = std::chrono::seconds(options_.window_seconds);
  while (now - window_start_ >= window) {
    window_start_ += window;
    window_counts_.clear();
  }
  const bool api =
      request.path.starts_with("/api/") && !request.path.starts_with("/api/resolve-cache/");
  const std::string bucket = api ? "api" : "resolvers";
  const int64_t quota = api ? options_.api_quota : options_.resolvers_quota;
  const int64_t used = ++window_counts_[bucket];
  const int64_t reset =
      std::chrono::ceil<std::chrono::seconds>(window - (now - window_start_)).count();
  *over = used > quota;
  auto has = [&](const char* name) {
    return std::any_of(response.headers.begin(), response.headers.end(),
                       [&](const auto& h) { return IEquals(h.first, name); });
  };
  if (!has("RateLimit")) {
    response.Set("RateLimit", "\"" + bucket +
                                  "\";r=" + std::to_string(std::max<int64_t>(0, quota - used)) +
                                  ";t=" + std::to_string(reset));
  }
  response.Set("RateLimit-Policy", "\"fixed window\";\"" + bucket +
                                       "\";q=" + std::to_string(quota) +
                                       ";w=" + std::to_string(options_.window_seconds));
}

FakeResponse HubState::Handle(const FakeRequest& request) {
  std::lock_guard lock(mutex_);
  if (request.server == "hub" && request.path.starts_with("/_fakehub/")) return Control(request);
  Caller caller;
  if (auto auth = request.Header("Authorization")) {
    const std::string token = auth->starts_with("Bearer ") ? auth->substr(7) : *auth;
    for (const FakeUser& user : options_.users) {
      if (user.token == token) caller.user = &user;
    }
    caller.bad_token = caller.user == nullptr;
  }
  FaultRule* modifier = nullptr;
  std::optional<FakeResponse> faulted = ApplyFault(request, &modifier);
  FakeResponse response;
  if (faulted) {
    response = std::move(*faulted);
    if (request.server == "hub" && response.wire != WireFault::kReset) {
      bool over = false;
      AddRateLimitHeaders(request, response, &over);
    }
  } else {
    active_modifier_ = modifier;
    if (request.server == "cdn") {
      response = Cdn(request);
    } else {
      FakeResponse probe;
      bool over = false;
      AddRateLimitHeaders(request, probe, &over);
      if (over) {
        response = JsonError(429, "", "You have exceeded our rate limit for this bucket.");
      } else {
        response = Route(request, caller);
      }
      for (auto& [name, value] : probe.headers) response.Set(name, value);
    }
    active_modifier_ = nullptr;
    if (modifier != nullptr) {
      switch (modifier->action) {
        case FaultAction::kDelay:
          response.delay = modifier->delay;
          break;
        case FaultAction::kTruncate:
          response.wire = WireFault::kTruncate;
          break;
        case FaultAction::kWrongLength:
          response.wire = WireFault::kWrongLength;
          break;
        case FaultAction::kInvalidJson:
          response.blob.reset();
          response.body = "{\"error\": \"not closed\", [1, 2";
          break;
        default:
          break;
      }
    }
  }
  response.head = request.method == "HEAD";
  response.Set("X-Request-Id", "Root=1-fakehub-" + std::to_string(next_seq_));
  response.Set("Access-Control-Expose-Headers",
               "X-Repo-Commit,X-Request-Id,X-Error-Code,X-Error-Message,X-Total-Count,ETag,Link,"
               "Accept-Ranges,Content-Range,X-Linked-Size,X-Linked-ETag");
  LoggedRequest entry;
  entry.seq = next_seq_++;
  entry.server = request.server;
  entry.method = request.method;
  entry.path = request.path;
  entry.query = request.query;
  entry.status = response.status;
  entry.bytes = response.head ? 0 : response.body_size();
  entry.authorization = request.Header("Authorization").has_value();
  entry.range = request.Header("Range").value_or("");
  entry.if_none_match = request.Header("If-None-Match").value_or("");
  entry.user_agent = request.Header("User-Agent").value_or("");
  entry.connection = request.connection;
  log_.push_back(std::move(entry));
  return response;
}

}  // namespace hubwatch::fakehub
