#include "daemon/app/prepared_config.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "daemon/config/listen_address.h"
#include "daemon/subscriptions/config_sync.h"

namespace hubwatch::app {
namespace {

// The store's directory must exist (SQLite creates the file, never the directory).
Status CheckStorePath(const std::string& store) {
  if (store == ":memory:") return Status::Ok();
  std::error_code ec;
  if (std::filesystem::is_directory(store, ec)) {
    return Error::InvalidInput("store " + config::QuoteForError(store, config::kMaxQuotedPath) +
                               " is a directory");
  }
  const std::filesystem::path dir = std::filesystem::path(store).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
    return Error::InvalidInput(
        "store " + config::QuoteForError(store, config::kMaxQuotedPath) + ": the directory " +
        config::QuoteForError(dir.string(), config::kMaxQuotedPath) + " does not exist");
  }
  return Status::Ok();
}

// The configuration's follow rules in the store; the config rules it no longer lists removed.
Status WriteFollowRules(store::Store& writer, const std::vector<config::FollowRule>& rules,
                        int64_t now, const store::FollowTargets& targets, ConfigWrite& out) {
  std::set<std::string> listed;
  for (const config::FollowRule& rule : rules) {
    const store::FollowRuleRecord record{.name = rule.name,
                                         .source = store::Source::kConfig,
                                         .spec = config::FollowRuleJson(rule).dump(),
                                         .created_at = now};
    if (Status s = writer.follows().PutRule(record); !s.ok()) {
      return Error::InvalidInput("follow rule \"" + rule.name + "\": " + s.error().message);
    }
    listed.insert(rule.name);
  }
  Result<std::vector<store::FollowRuleRecord>> stored = writer.follows().ListRules();
  if (!stored.ok()) return stored.error();
  for (const store::FollowRuleRecord& r : *stored) {
    if (r.source != store::Source::kConfig || listed.count(r.name)) continue;
    Result<std::vector<std::string>> untracked = writer.follows().RemoveRule(r.name, now, targets);
    if (!untracked.ok()) return untracked.error();
    out.follow_untracked.insert(out.follow_untracked.end(), untracked->begin(), untracked->end());
  }
  Result<std::vector<store::FollowRuleRecord>> after = writer.follows().ListRules();
  if (!after.ok()) return after.error();
  out.follow_rules = std::move(after).value();
  return Status::Ok();
}

}  // namespace

Result<PreparedConfig> PrepareConfig(config::DaemonConfig config) {
  if (Result<boost::asio::ip::tcp::endpoint> l = config::ParseListenAddress(config.api.listen);
      !l.ok()) {
    return l.error();
  }
  if (Status s = CheckStorePath(config.store); !s.ok()) return s.error();
  Result<hub::HubSettings> hub = config::HubSettingsFor(config);
  if (!hub.ok()) return hub.error();
  Result<std::optional<std::string>> admin = config::ReadAdminToken(config);
  if (!admin.ok()) return admin.error();
  Result<std::optional<std::string>> hub_webhook = config::ReadWebhookSecret(config);
  if (!hub_webhook.ok()) return hub_webhook.error();
  Result<std::vector<store::Subscription>> subscriptions =
      subscriptions::LoadConfigSubscriptions(config.subscriptions, config.webhooks);
  if (!subscriptions.ok()) return subscriptions.error();
  return PreparedConfig{std::move(config), std::move(hub).value(), std::move(admin).value(),
                        std::move(hub_webhook).value(), std::move(subscriptions).value()};
}

std::vector<std::string> KeysNeedingRestart(const PreparedConfig& running,
                                            const PreparedConfig& next) {
  const config::DaemonConfig& a = running.config;
  const config::DaemonConfig& b = next.config;
  std::vector<std::string> keys;
  auto check = [&keys](bool differs, const char* key) {
    if (differs) keys.push_back(key);
  };
  check(a.store != b.store, "store");
  check(running.hub.endpoint != next.hub.endpoint, "hub.endpoint");
  check(running.hub.token.reveal() != next.hub.token.reveal(), "hub.token_file");
  check(running.hub.ca_file != next.hub.ca_file, "hub.ca_file");
  check(a.hub.max_concurrent != b.hub.max_concurrent, "hub.max_concurrent");
  check(a.hub.max_safetensors_header_bytes != b.hub.max_safetensors_header_bytes,
        "hub.max_safetensors_header_bytes");
  check(a.api.listen != b.api.listen, "listen");
  check(running.admin_token != next.admin_token, "admin_token_file");
  check(running.hub_webhook_secret != next.hub_webhook_secret, "hub.webhook_secret_file");
  check(a.api.max_body_bytes != b.api.max_body_bytes ||
            a.api.max_plan_body_bytes != b.api.max_plan_body_bytes ||
            a.api.max_connections != b.api.max_connections ||
            a.api.header_timeout_s != b.api.header_timeout_s ||
            a.api.read_timeout_s != b.api.read_timeout_s,
        "api");
  check(a.log.format != b.log.format || a.log.level != b.log.level, "log");
  return keys;
}

Result<ConfigWrite> WriteConfig(store::Store& writer, const PreparedConfig& config, int64_t now,
                                const store::FollowTargets& targets) {
  ConfigWrite out;
  Status s = writer.Atomically([&]() -> Status {
    // The listed ids as views into `config` (sorted for lookup): no copy of 100,000 strings.
    std::vector<std::string_view> listed;
    listed.reserve(config.config.repos.size());
    for (const config::RepoConfig& r : config.config.repos) {
      store::RepoRecord record;
      record.id = r.id;
      record.refs = r.refs;
      record.pins = r.pins;
      record.added_at = now;
      record.source = store::Source::kConfig;
      if (Status a = writer.repos().AddRepo(record); !a.ok()) return a;
      listed.push_back(r.id);
    }
    std::sort(listed.begin(), listed.end());
    Result<std::vector<store::RepoSchedule>> stored = writer.repos().ListSchedules();
    if (!stored.ok()) return stored.error();
    out.repos = std::move(stored).value();
    std::erase_if(out.repos, [&](const store::RepoSchedule& r) {
      if (r.source != store::Source::kConfig ||
          std::binary_search(listed.begin(), listed.end(), std::string_view(r.id))) {
        return false;
      }
      out.untracked.push_back(r.id);
      return true;
    });
    for (const std::string& id : out.untracked) {
      if (Status d = writer.repos().RemoveRepo(id); !d.ok()) return d;
    }
    if (Status f = WriteFollowRules(writer, config.config.follow, now, targets, out); !f.ok()) {
      return f;
    }
    // The repos of a rule removed just now are untracked: not among those the scheduler tracks.
    if (!out.follow_untracked.empty()) {
      const std::set<std::string_view> gone(out.follow_untracked.begin(),
                                            out.follow_untracked.end());
      std::erase_if(out.repos, [&](const store::RepoSchedule& r) { return gone.count(r.id) != 0; });
    }
    Result<store::SubscriptionSync> sync =
        writer.outbox().SyncConfigSubscriptions(config.subscriptions, now);
    if (!sync.ok()) return sync.error();
    out.subscriptions = *sync;
    Result<std::vector<store::Subscription>> all = writer.outbox().ListSubscriptions();
    if (!all.ok()) return all.error();
    out.all_subscriptions = std::move(all).value();
    return Status::Ok();
  });
  if (!s.ok()) return s.error();
  return out;
}

}  // namespace hubwatch::app
