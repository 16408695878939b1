// fakehub's control surface: fault rules (in-process and POST /_fakehub/faults), repo
// mutations (super-squash, delete, gate, disable, rename), spam children (POST /_fakehub/spam
// {"upstream": ID, "count": N, "relation": "adapter"}), the request log and the replay clock.
// Pushes (POST /_fakehub/repos/{id}/commit) are in hub_events.cc.

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

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
#include "tests/fakehub/hub_state.h"
#include "tests/fakehub/synthetic.h"

namespace hubwatch::fakehub {
namespace {

using nlohmann::json;

FakeResponse PlainJson(int status, const json& body) { return JsonBody(status, body.dump()); }
const char* ActionName(FaultAction a) {
  switch (a) {
    case FaultAction::kStatus:
      return "status";
    case FaultAction::kRateLimit:
      return "rate_limit";
    case FaultAction::kRetryAfter:
      return "retry_after";
    case FaultAction::kDelay:
      return "delay";
    case FaultAction::kReset:
      return "reset";
    case FaultAction::kTruncate:
      return "truncate";
    case FaultAction::kInvalidJson:
      return "invalid_json";
    case FaultAction::kWrongLength:
      return "wrong_length";
    case FaultAction::kHugeSafetensorsHeader:
      return "huge_safetensors_header";
    case FaultAction::kIgnoreRange:
      return "ignore_range";
    case FaultAction::kRedirectOffHost:
      return "redirect_off_host";
  }
  return "status";
}

json LogJson(const LoggedRequest& r) {
  json j = {{"seq", r.seq},
            {"server", r.server},
            {"method", r.method},
            {"path", r.path},
            {"query", r.query},
            {"status", r.status},
            {"bytes", r.bytes},
            {"authorization", r.authorization},
            {"range", r.range},
            {"if_none_match", r.if_none_match},
            {"user_agent", r.user_agent},
            {"connection", r.connection}};
  if (!r.body.empty()) j["body"] = r.body;  // webhook deliveries: the payload, as sent
  return j;
}

}  // namespace

Result<FaultRule> ParseFaultRule(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error::InvalidInput("fault: not a JSON object");
  FaultRule rule;
  const std::string action = j.value("action", std::string("status"));
  bool known = false;
  for (int a = 0; a <= static_cast<int>(FaultAction::kRedirectOffHost); ++a) {
    if (action == ActionName(static_cast<FaultAction>(a))) {
      rule.action = static_cast<FaultAction>(a);
      known = true;
    }
  }
  if (!known) return Error::InvalidInput("fault: unknown action \"" + action + "\"");
  try {
    rule.server = j.value("server", std::string("hub"));
    rule.method = j.value("method", std::string());
    rule.path_regex = j.value("path", std::string());
    rule.status = j.value("status", rule.action == FaultAction::kRetryAfter ? 429 : 503);
    if (j.contains("retry_after")) {
      rule.retry_after = j["retry_after"].is_string()
                             ? j["retry_after"].get<std::string>()
                             : std::to_string(j["retry_after"].get<int64_t>());
    }
    rule.reset_seconds = j.value("reset_seconds", int64_t{30});
    rule.delay = std::chrono::milliseconds(j.value("delay_ms", int64_t{0}));
    rule.times = j.value("times", -1);
    std::regex check(rule.path_regex);
  } catch (const std::exception& e) {
    return Error::InvalidInput(std::string("fault: ") + e.what());
  }
  return rule;
}

FakeResponse HubState::Control(const FakeRequest& request) {
  const std::string& p = request.path;
  const std::string& m = request.method;
  if (p == "/_fakehub/log") {
    if (m == "DELETE") {
      log_.clear();
      return PlainJson(200, json{{"cleared", true}});
    }
    json all = json::array();
    for (const LoggedRequest& r : log_) all.push_back(LogJson(r));
    return PlainJson(200, all);
  }
  if (p == "/_fakehub/faults") {
    if (m == "DELETE") {
      faults_.clear();
      return PlainJson(200, json{{"cleared", true}});
    }
    if (m == "GET") {
      json all = json::array();
      for (const FaultRule& f : faults_) {
        all.push_back({{"action", ActionName(f.action)},
                       {"path", f.path_regex},
                       {"server", f.server},
                       {"times", f.times}});
      }
      return PlainJson(200, all);
    }
    json body = json::parse(request.body, nullptr, false);
    if (body.is_discarded()) return JsonError(400, "", "body is not JSON");
    if (!body.is_array()) body = json::array({body});
    for (const json& item : body) {
      const std::string action = item.is_object() ? item.value("action", std::string()) : "";
      const std::string repo = item.is_object() ? item.value("repo", std::string()) : "";
      Status done = Status::Ok();
      // Repo mutations share the endpoint with request faults. The lock is held: call the
      // unlocked bodies through small lambdas.
      auto with_repo = [&](auto fn) -> Status {
        Repo* r = FindRepoById(repo);
        if (r == nullptr) return Error::InvalidInput("no repo " + repo);
        return fn(*r);
      };
      if (action == "super_squash") {
        mutex_.unlock();
        done = SuperSquash(repo, item.value("branch", std::string("main")),
                           item.value("message", std::string()));
        mutex_.lock();
      } else if (action == "delete_repo") {
        done = DeleteLocked(repo);
      } else if (action == "gate") {
        std::optional<std::string> mode;
        if (item.contains("mode") && item["mode"].is_string())
          mode = item["mode"].get<std::string>();
        done = with_repo([&](Repo& r) {
          r.gated = mode;
          return Status::Ok();
        });
      } else if (action == "disable") {
        done = with_repo([&](Repo& r) {
          r.disabled = item.value("disabled", true);
          return Status::Ok();
        });
      } else if (action == "rename") {
        done = RenameLocked(repo, item.value("to", std::string()));
      } else {
        Result<FaultRule> rule = ParseFaultRule(item.dump());
        if (!rule.ok()) return JsonError(400, "", rule.error().message);
        faults_.push_back(std::move(rule).value());
      }
      if (!done.ok()) return JsonError(400, "", done.error().message);
    }
    return PlainJson(200, json{{"faults", faults_.size()}});
  }
  if (p == "/_fakehub/clock") {
    if (m == "POST") {
      json body = json::parse(request.body, nullptr, false);
      if (body.is_object()) replay_offset_ += body.value("advance_seconds", int64_t{0});
      NoteHeadChanges();
    }
    return PlainJson(200, json{{"now", FormatIsoTime(ReplayNow())},
                               {"mode", options_.mode == Mode::kReplay ? "replay" : "static"}});
  }
  if (p.starts_with("/_fakehub/repos/") && p.ends_with("/commit") && m == "POST") {
    return PushControl(request);
  }
  if (p == "/_fakehub/spam" && m == "POST") return SpamControl(request);
  if (p == "/_fakehub/rate-limits/reset" && m == "POST") {
    window_counts_.clear();
    return PlainJson(200, json{{"reset", true}});
  }
  return JsonError(404, "", "unknown control endpoint");
}

void HubState::AddFault(FaultRule rule) {
  std::lock_guard lock(mutex_);
  faults_.push_back(std::move(rule));
}
void HubState::ClearFaults() {
  std::lock_guard lock(mutex_);
  faults_.clear();
}
std::vector<LoggedRequest> HubState::Log() const {
  std::lock_guard lock(mutex_);
  return log_;
}
void HubState::ClearLog() {
  std::lock_guard lock(mutex_);
  log_.clear();
}

Status HubState::SuperSquash(const std::string& id, const std::string& branch,
                             std::string message) {
  std::lock_guard lock(mutex_);
  Repo* repo = FindRepoById(id);
  if (repo == nullptr) return Error::InvalidInput("no repo " + id);
  if (branch != "main") return Error::Unsupported("fakehub squashes main only");
  const int head = MainHead(*repo);
  if (head < 0) return Error::InvalidInput(id + " has no visible commit");
  NoteHeadChanges();  // what landed before, reported before the squash
  Commit squashed;
  squashed.title = message.empty() ? "Super-squash branch 'main' using huggingface_hub" : message;
  squashed.authors = {"system"};
  squashed.time = std::max(ReplayNow(), repo->commits[static_cast<size_t>(head)].time + 1);
  if (options_.mode == Mode::kStatic) {
    squashed.time = repo->commits[static_cast<size_t>(head)].time + 1;
  }
  squashed.date = FormatIsoTime(squashed.time);
  squashed.files = repo->commits[static_cast<size_t>(head)].files;
  squashed.id = Sha1Hex("squash\n" + id + "\n" + repo->commits[static_cast<size_t>(head)].id +
                        "\n" + std::to_string(repo->commits.size()));
  repo->commits.push_back(std::move(squashed));
  repo->main_override = static_cast<int>(repo->commits.size() - 1);
  NoteHeadChanges();
  return Status::Ok();
}

Status HubState::DeleteRepo(const std::string& id) {
  std::lock_guard lock(mutex_);
  return DeleteLocked(id);
}

Status HubState::SetGated(const std::string& id, std::optional<std::string> mode) {
  std::lock_guard lock(mutex_);
  Repo* repo = FindRepoById(id);
  if (repo == nullptr) return Error::InvalidInput("no repo " + id);
  repo->gated = std::move(mode);
  return Status::Ok();
}

Status HubState::SetDisabled(const std::string& id, bool disabled) {
  std::lock_guard lock(mutex_);
  Repo* repo = FindRepoById(id);
  if (repo == nullptr) return Error::InvalidInput("no repo " + id);
  repo->disabled = disabled;
  return Status::Ok();
}

Status HubState::RenameRepo(const std::string& from, const std::string& to) {
  std::lock_guard lock(mutex_);
  return RenameLocked(from, to);
}

Status HubState::PushCommit(const std::string& id, const std::map<std::string, std::string>& files,
                            const std::vector<std::string>& removed, const std::string& title,
                            const std::string& message, std::string* new_sha) {
  std::lock_guard lock(mutex_);
  Repo* repo = FindRepoById(id);
  if (repo == nullptr) return Error::InvalidInput("no repo " + id);
  return PushLocked(*repo, files, removed, title, message, new_sha);
}

void HubState::AdvanceReplayClock(std::chrono::seconds by) {
  std::lock_guard lock(mutex_);
  replay_offset_ += by.count();
  NoteHeadChanges();
}

void HubState::ResetRateLimits() {
  std::lock_guard lock(mutex_);
  window_counts_.clear();
}

void HubState::SetRelativeLinks(bool relative) {
  std::lock_guard lock(mutex_);
  options_.relative_links = relative;
}

size_t HubState::repo_count() const {
  std::lock_guard lock(mutex_);
  return repos_.size();
}

Status HubState::AddRepos(std::vector<Repo> repos) {
  std::lock_guard lock(mutex_);
  return AddReposLocked(std::move(repos));
}

Status HubState::AddReposLocked(std::vector<Repo> repos) {
  std::set<std::string> ids;
  for (const Repo& r : repos_) ids.insert(r.id);
  for (const Repo& r : repos) {
    if (!ids.insert(r.id).second) return Error::InvalidInput("repo " + r.id + " is served already");
  }
  for (Repo& repo : repos) {
    for (const Commit& c : repo.commits) {
      for (const auto& [path, blob] : *c.files) {
        if (blob->is_lfs()) blobs_by_sha256_[blob->sha256] = blob;
      }
    }
    notified_head_.push_back(MainHead(repo));  // added, not pushed: no webhook
    repos_.push_back(std::move(repo));
  }
  return Status::Ok();
}

Result<std::vector<std::string>> HubState::AddSpamChildren(const std::string& upstream, int count,
                                                           const std::string& relation) {
  std::lock_guard lock(mutex_);
  if (count < 1 || count > 100000) return Error::InvalidInput("spam: count must be 1..100000");
  if (relation != "finetune" && relation != "adapter" && relation != "quantized" &&
      relation != "merge") {
    return Error::InvalidInput("spam: unknown relation \"" + relation + "\"");
  }
  SpamOptions options;
  options.upstream = upstream;
  options.count = count;
  options.relation = relation;
  options.time = CommitNow() - (count - 1);  // the newest now: every one visible at once
  options.first_serial = spam_serial_;
  std::vector<Repo> spam = GenerateSpamChildren(options);
  std::vector<std::string> ids;
  for (const Repo& r : spam) ids.push_back(r.id);
  if (Status s = AddReposLocked(std::move(spam)); !s.ok()) return s.error();
  spam_serial_ += count;
  return ids;
}

FakeResponse HubState::SpamControl(const FakeRequest& request) {
  json body = json::parse(request.body, nullptr, false);
  if (!body.is_object() || !body.contains("upstream") || !body["upstream"].is_string()) {
    return JsonError(400, "", "spam: {\"upstream\": ID, \"count\": N, \"relation\": R}");
  }
  const int count =
      body.contains("count") && body["count"].is_number_integer()
          ? static_cast<int>(std::clamp<int64_t>(body["count"].get<int64_t>(), 0, 1000000))
          : 1000;
  const std::string relation = body.contains("relation") && body["relation"].is_string()
                                   ? body["relation"].get<std::string>()
                                   : "adapter";
  mutex_.unlock();  // Control runs with the lock held; AddSpamChildren takes it
  Result<std::vector<std::string>> ids =
      AddSpamChildren(body["upstream"].get<std::string>(), count, relation);
  mutex_.lock();
  if (!ids.ok()) return JsonError(400, "", ids.error().message);
  return PlainJson(200, json{{"added", ids->size()}, {"first", ids->front()}});
}

}  // namespace hubwatch::fakehub
