#include "daemon/config/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "daemon/config/config_hub.h"
#include "daemon/config/config_json.h"
#include "estimator/base/json_nesting.h"
#include "estimator/base/text.h"
#include "tracker/diff/change.h"
#include "tracker/hub/repo_id.h"

namespace hubwatch::config {

using field::Bad;
using field::CheckKeys;
using field::Describe;
using field::IntInRange;
using field::Path;
using field::PositiveInt;
using field::Resolve;
using field::String;

namespace {

constexpr size_t kMaxConfigBytes = 64 << 20;

// The end of the longest prefix of `text` of at most `max` bytes that does not split a UTF-8
// character.
size_t Utf8Prefix(std::string_view text, size_t max) {
  if (text.size() <= max) return text.size();
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return n;
}

// `text` for a one-line message: at most `max` bytes ("..." when cut), control characters as
// '?'.
std::string OneLine(std::string_view text, size_t max) {
  const size_t n = Utf8Prefix(text, max);
  std::string out(text.substr(0, n));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return n < text.size() ? out + "..." : out;
}

// Whether `path` names a directory (then it is not the file a key wants).
bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

// listen, admin_token_file, api, subscriptions, webhooks, log: what `hubwatch serve` reads.
Status ParseServiceKeys(const nlohmann::json& j, const std::string& base_dir, DaemonConfig& c) {
  if (j.contains("listen")) {
    Result<std::string> l = String(j["listen"], "listen");
    if (!l.ok()) return l.error();
    c.api.listen = *l;
  }
  if (j.contains("admin_token_file")) {
    Result<std::string> t = Path(j["admin_token_file"], "admin_token_file", base_dir);
    if (!t.ok()) return t.error();
    c.api.admin_token_file = *t;
  }
  if (j.contains("api")) {
    const nlohmann::json& a = j["api"];
    if (!a.is_object()) return Bad("api must be an object");
    if (Status s = CheckKeys(a, "api",
                             {"max_body_bytes", "max_plan_body_bytes", "max_connections",
                              "header_timeout_s", "read_timeout_s"});
        !s.ok()) {
      return s;
    }
    auto read = [&](const char* key, int64_t max, auto& field) -> Status {
      if (!a.contains(key)) return Status::Ok();
      Result<int64_t> n = PositiveInt(a[key], std::string("api.") + key, max);
      if (!n.ok()) return n.error();
      field = static_cast<std::remove_reference_t<decltype(field)>>(*n);
      return Status::Ok();
    };
    for (Status s : {read("max_body_bytes", 1 << 30, c.api.max_body_bytes),
                     read("max_plan_body_bytes", 1 << 30, c.api.max_plan_body_bytes),
                     read("max_connections", 100000, c.api.max_connections),
                     read("header_timeout_s", 3600, c.api.header_timeout_s),
                     read("read_timeout_s", 3600, c.api.read_timeout_s)}) {
      if (!s.ok()) return s;
    }
  }
  if (j.contains("subscriptions")) {
    if (!j["subscriptions"].is_array()) return Bad("subscriptions must be an array");
    for (size_t i = 0; i < j["subscriptions"].size(); ++i) {
      const nlohmann::json& s = j["subscriptions"][i];
      const std::string where = "subscriptions[" + std::to_string(i) + "]";
      if (!s.is_object()) return Bad(where + " must be an object");
      if (Status k = CheckKeys(s, where,
                               {"url", "secret_file", "repos", "kinds", "min_impact", "backfill"});
          !k.ok()) {
        return k;
      }
      SubscriptionConfig sub;
      Result<std::string> url = String(s.value("url", nlohmann::json()), where + ".url");
      if (!url.ok()) return url.error();
      sub.url = *url;
      Result<std::string> secret =
          Path(s.value("secret_file", nlohmann::json()), where + ".secret_file", base_dir);
      if (!secret.ok()) return secret.error();
      sub.secret_file = *secret;
      if (s.contains("repos")) {
        Result<std::string> g = String(s["repos"], where + ".repos");
        if (!g.ok()) return g.error();
        sub.repos = *g;
      }
      if (s.contains("kinds")) {
        if (!s["kinds"].is_array()) return Bad(where + ".kinds must be an array");
        for (const nlohmann::json& k : s["kinds"]) {
          Result<std::string> kind = String(k, where + ".kinds[]");
          if (!kind.ok()) return kind.error();
          sub.kinds.push_back(*kind);
        }
      }
      if (s.contains("min_impact")) {
        Result<std::string> m = String(s["min_impact"], where + ".min_impact");
        if (!m.ok()) return m.error();
        if (!diff::ParseImpact(*m)) {
          return Bad(where + ".min_impact must be cosmetic, behavioral or breaking");
        }
        sub.min_impact = *m;
      }
      if (s.contains("backfill")) {
        if (!s["backfill"].is_boolean()) return Bad(where + ".backfill must be true or false");
        sub.backfill = s["backfill"].get<bool>();
      }
      c.subscriptions.push_back(std::move(sub));
    }
  }
  if (j.contains("webhooks")) {
    const nlohmann::json& w = j["webhooks"];
    if (!w.is_object()) return Bad("webhooks must be an object");
    if (Status s = CheckKeys(w, "webhooks", {"allow_private_targets", "retry_for_s", "timeout_s"});
        !s.ok()) {
      return s;
    }
    if (w.contains("allow_private_targets")) {
      if (!w["allow_private_targets"].is_boolean()) {
        return Bad("webhooks.allow_private_targets must be a boolean");
      }
      c.webhooks.allow_private_targets = w["allow_private_targets"].get<bool>();
    }
    for (auto [key, field, max] : {std::tuple<const char*, int64_t*, int64_t>{
                                       "retry_for_s", &c.webhooks.retry_for_s, 30 * 86400},
                                   {"timeout_s", &c.webhooks.timeout_s, 600}}) {
      if (!w.contains(key)) continue;
      Result<int64_t> n = PositiveInt(w[key], std::string("webhooks.") + key, max);
      if (!n.ok()) return n.error();
      *field = *n;
    }
  }
  if (j.contains("log")) {
    const nlohmann::json& l = j["log"];
    if (!l.is_object()) return Bad("log must be an object");
    if (Status s = CheckKeys(l, "log", {"format", "level"}); !s.ok()) return s;
    if (l.contains("format")) {
      Result<std::string> f = String(l["format"], "log.format");
      if (!f.ok()) return f.error();
      if (*f != "text" && *f != "json") return Bad("log.format must be text or json");
      c.log.format = *f;
    }
    if (l.contains("level")) {
      Result<std::string> v = String(l["level"], "log.level");
      if (!v.ok()) return v.error();
      static const std::set<std::string> kLevels = {"trace", "debug", "info", "warn", "error"};
      if (!kLevels.count(*v)) return Bad("log.level must be trace, debug, info, warn or error");
      c.log.level = *v;
    }
  }
  return Status::Ok();
}

}  // namespace

std::string QuoteForError(std::string_view value, size_t max) {
  // Escapes make the quote longer than its input: shorten the input until the quote fits.
  for (size_t cut = max;; cut /= 2) {
    const size_t n = Utf8Prefix(value, cut);
    // Invalid UTF-8 becomes U+FFFD instead of throwing; dump() escapes C0 controls, and
    // EscapeControls the DEL and C1 ones dump() leaves as they are.
    std::string quoted =
        EscapeControls(nlohmann::json(std::string(value.substr(0, n)))
                           .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (quoted.size() <= max + 2 || n == 0) {
      return n < value.size() ? quoted + "..." : quoted;
    }
  }
}

Result<DaemonConfig> ParseConfig(std::string_view text, const std::string& base_dir) {
  if (JsonNestsDeeperThan(text)) {
    return Bad("not valid JSON: nested deeper than " + std::to_string(kMaxJsonNesting) + " levels");
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax, and numbers out of range (1e999)
    return Bad("not valid JSON (" + OneLine(e.what(), 200) + ")");
  }
  if (!j.is_object()) return Bad("the configuration must be a JSON object");
  if (Status s = CheckKeys(j, "config",
                           {"store", "hub", "repos", "follow", "poll", "listen", "admin_token_file",
                            "api", "subscriptions", "webhooks", "log"});
      !s.ok()) {
    return s.error();
  }
  DaemonConfig c;
  if (j.contains("store")) {
    Result<std::string> s = Path(j["store"], "store", base_dir);
    if (!s.ok()) return s.error();
    c.store = *s;
  } else {
    c.store = Resolve(base_dir, c.store);
  }

  if (j.contains("hub")) {
    if (Status s = ParseHubKeys(j["hub"], base_dir, c.hub); !s.ok()) return s.error();
  }

  if (j.contains("repos")) {
    if (!j["repos"].is_array()) return Bad("repos must be an array");
    // By id without letter case: the Hub matches ids that way, so "Qwen/X" and "qwen/x" are
    // one repo, which would otherwise be tracked (and advised) twice.
    std::map<std::string, size_t> seen;
    c.repos.reserve(j["repos"].size());
    for (size_t i = 0; i < j["repos"].size(); ++i) {
      const nlohmann::json& r = j["repos"][i];
      const std::string where = "repos[" + std::to_string(i) + "]";
      Result<RepoConfig> repo = ParseRepoEntry(r, where);
      if (!repo.ok()) return repo.error();
      std::string folded = repo->id;
      for (char& ch : folded) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (auto [at, fresh] = seen.try_emplace(std::move(folded), i); !fresh) {
        const std::string& first = c.repos[at->second].id;
        return Bad(where + ": " + repo->id +
                   (first == repo->id ? " is listed twice"
                                      : " is " + first + " (repos[" + std::to_string(at->second) +
                                            "]) in other letters: the Hub matches ids without "
                                            "regard to case"));
      }
      c.repos.push_back(std::move(repo).value());
    }
  }

  if (j.contains("follow")) {
    if (!j["follow"].is_array()) return Bad("follow must be an array of follow rules");
    std::set<std::string> names;
    for (size_t i = 0; i < j["follow"].size(); ++i) {
      const std::string where = "follow[" + std::to_string(i) + "]";
      Result<FollowRule> rule = ParseFollowRule(j["follow"][i], where);
      if (!rule.ok()) return rule.error();
      if (!names.insert(rule->name).second) {
        return Bad(where + ": a second rule named \"" + rule->name + "\" (give it a \"name\")");
      }
      c.follow.push_back(std::move(rule).value());
    }
  }

  if (j.contains("poll")) {
    const nlohmann::json& p = j["poll"];
    if (!p.is_object()) return Bad("poll must be an object");
    if (Status s = CheckKeys(
            p, "poll",
            {"interval_s", "advise_cosmetic", "settle_window_s", "max_concurrent", "api_quota",
             "resolvers_quota", "quota_window_s", "hints", "reconcile_interval_s",
             "listing_page_size", "derivatives_interval_s", "webhook_budget_percent",
             "max_followed_repos"});
        !s.ok()) {
      return s.error();
    }
    for (auto [key, field, max] :
         {std::tuple<const char*, int64_t*, int64_t>{"settle_window_s", &c.poll.settle_window_s,
                                                     30 * 86400},
          {"api_quota", &c.poll.api_quota, 10'000'000},
          {"resolvers_quota", &c.poll.resolvers_quota, 10'000'000},
          {"quota_window_s", &c.poll.quota_window_s, 86400},
          {"reconcile_interval_s", &c.poll.reconcile_interval_s, 30 * 86400},
          {"listing_page_size", &c.poll.listing_page_size, 1000},
          {"derivatives_interval_s", &c.poll.derivatives_interval_s, 30 * 86400},
          {"webhook_budget_percent", &c.poll.webhook_budget_percent, 100},
          {"max_followed_repos", &c.poll.max_followed_repos, 1'000'000}}) {
      if (!p.contains(key)) continue;
      // settle_window_s 0: advise at once; webhook_budget_percent 0: webhooks poll nothing.
      const std::string_view k = key;
      const int64_t min = k == "settle_window_s" || k == "webhook_budget_percent" ? 0 : 1;
      Result<int64_t> n = IntInRange(p[key], std::string("poll.") + key, min, max);
      if (!n.ok()) return n.error();
      *field = *n;
    }
    if (p.contains("max_concurrent")) {
      Result<int64_t> n = PositiveInt(p["max_concurrent"], "poll.max_concurrent", 256);
      if (!n.ok()) return n.error();
      c.poll.max_concurrent = static_cast<int>(*n);
    }
    if (p.contains("interval_s")) {
      Result<int64_t> n = PositiveInt(p["interval_s"], "poll.interval_s", 30 * 24 * 3600);
      if (!n.ok()) return n.error();
      c.poll.interval_s = *n;
    }
    if (p.contains("hints")) {
      Result<std::string> h = String(p["hints"], "poll.hints");
      if (!h.ok()) return h.error();
      if (*h != "listing" && *h != "off") {
        return Bad("poll.hints must be \"listing\" or \"off\", got " + QuoteForError(*h));
      }
      c.poll.hints = *h == "listing";
    }
    if (p.contains("advise_cosmetic")) {
      if (!p["advise_cosmetic"].is_boolean()) return Bad("poll.advise_cosmetic must be a boolean");
      c.poll.advise_cosmetic = p["advise_cosmetic"].get<bool>();
    }
  }
  const bool reconcile_given = j.contains("poll") && j["poll"].contains("reconcile_interval_s");
  if (!reconcile_given) {
    c.poll.reconcile_interval_s = std::max(c.poll.reconcile_interval_s, c.poll.interval_s);
  }
  if (c.poll.hints && c.poll.reconcile_interval_s < c.poll.interval_s) {
    return Bad("poll.reconcile_interval_s (" + std::to_string(c.poll.reconcile_interval_s) +
               ") must be at least poll.interval_s (" + std::to_string(c.poll.interval_s) +
               "): with hints on every repo is still polled once per reconcile interval");
  }
  if (Status s = ParseServiceKeys(j, base_dir, c); !s.ok()) return s.error();
  return c;
}

namespace {

// At most `max` bytes of the file at `path`, plus one when it is longer. Errors are bad input:
// the path came from the operator.
Result<std::string> ReadBounded(const std::string& path, size_t max, const std::string& where) {
  const std::string shown = QuoteForError(path, kMaxQuotedPath);
  if (IsDirectory(path)) return Bad(where + shown + " is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Bad(where + "cannot read " + shown + ": " + std::strerror(errno));
  std::string text;  // grows with what the file holds, not with the cap
  char chunk[64 * 1024];
  while (text.size() <= max && in) {
    in.read(chunk, static_cast<std::streamsize>(std::min(sizeof chunk, max + 1 - text.size())));
    text.append(chunk, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Bad(where + "cannot read " + shown + ": " + std::strerror(errno));
  return text;
}

}  // namespace

Result<DaemonConfig> LoadConfig(const std::string& path) {
  Result<std::string> text = ReadBounded(path, kMaxConfigBytes, "");
  if (!text.ok()) return text.error();
  if (text->size() > kMaxConfigBytes) {
    return Bad(path + ": larger than " + std::to_string(kMaxConfigBytes >> 20) + " MiB");
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  Result<DaemonConfig> c = ParseConfig(*text, dir);
  if (!c.ok()) return Error{c.error().code, path + ": " + c.error().message};
  c->path = path;
  return c;
}

Result<std::string> ReadSecretFile(const std::string& path, const std::string& where) {
  constexpr size_t kMaxSecretFileBytes = 4096;
  Result<std::string> text = ReadBounded(path, kMaxSecretFileBytes, where + ": ");
  if (!text.ok()) return text.error();
  const std::string shown = QuoteForError(path, kMaxQuotedPath);
  if (text->size() > kMaxSecretFileBytes) return Bad(where + ": " + shown + " is too large");
  const size_t begin = text->find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return Bad(where + ": " + shown + " is empty");
  const size_t end = text->find_last_not_of(" \t\r\n");
  std::string secret = text->substr(begin, end - begin + 1);
  for (unsigned char ch : secret) {
    if (ch < 0x20 || ch == 0x7f) {  // a NUL would cut the secret short where it is used
      return Bad(where + ": " + shown +
                 " holds a control character (a secret is one line of printable text)");
    }
  }
  return secret;
}

namespace {

Result<std::optional<std::string>> ReadOptionalSecret(const std::optional<std::string>& path,
                                                      const std::string& where) {
  if (!path) return std::optional<std::string>();
  Result<std::string> secret = ReadSecretFile(*path, where);
  if (!secret.ok()) return secret.error();
  return std::optional<std::string>(std::move(secret).value());
}

}  // namespace

Result<std::optional<std::string>> ReadTokenFile(const DaemonConfig& config) {
  return ReadOptionalSecret(config.hub.token_file, "hub.token_file");
}

Result<std::optional<std::string>> ReadWebhookSecret(const DaemonConfig& config) {
  return ReadOptionalSecret(config.hub.webhook_secret_file, "hub.webhook_secret_file");
}

Result<std::optional<std::string>> ReadAdminToken(const DaemonConfig& config) {
  return ReadOptionalSecret(config.api.admin_token_file, "admin_token_file");
}

Result<hub::HubSettings> HubSettingsFor(const DaemonConfig& config) {
  hub::HubConfig hub_config;
  hub_config.endpoint = config.hub.endpoint;
  hub_config.ca_file = config.hub.ca_file;
  Result<std::optional<std::string>> token = ReadTokenFile(config);
  if (!token.ok()) return token.error();
  hub_config.token = *token;
  Result<hub::HubSettings> settings = hub::LoadHubSettings(hub_config, hub::ProcessEnvironment());
  if (!settings.ok()) return Bad(OneLine(settings.error().message, 200));
  return settings;
}

}  // namespace hubwatch::config
