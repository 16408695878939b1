#include "daemon/app/poll_wiring.h"

#include <nlohmann/json.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <utility>

namespace hubwatch::app {
namespace {

// The listing's watermark in the store: one for the Hub, whichever listings a round read.
constexpr char kListingSource[] = "hub";

}  // namespace

hub::HubClientOptions HubClientOptionsFor(const config::DaemonConfig& config,
                                          const hub::HubSettings& settings,
                                          std::shared_ptr<spdlog::logger> log) {
  hub::HubClientOptions client;
  client.settings = settings;
  client.max_safetensors_header_bytes = config.hub.max_safetensors_header_bytes;
  client.log = [log](std::string_view line) { log->debug("hub: {}", line); };
  return client;
}

schedule::SchedulerOptions SchedulerOptionsFor(const config::DaemonConfig& config, bool has_token) {
  schedule::SchedulerOptions s;
  s.interval_s = config.poll.interval_s;
  s.max_concurrent = config.poll.max_concurrent;
  s.quota = config.poll.api_quota ? config.poll.api_quota : DefaultQuota(has_token);
  s.window_s = config.poll.quota_window_s;
  s.reconcile_interval_s = config.poll.hints ? config.poll.reconcile_interval_s : 0;
  s.webhook_percent = config.poll.webhook_budget_percent;
  return s;
}

// How often a repo's downloads, likes and tags are read (one model info request): the Hub's
// download count is a 30-day total, so a day is fresh enough for the model page.
constexpr int64_t kHubInfoIntervalS = 86400;

pipeline::PollerOptions PollerOptionsFor(const config::DaemonConfig& config, const Clock& clock,
                                         service::ThreadedStoreAccess& store,
                                         std::shared_ptr<spdlog::logger> log) {
  pipeline::PollerOptions p;
  p.advise_cosmetic = config.poll.advise_cosmetic;
  p.hub_info_interval_s = kHubInfoIntervalS;
  p.settle_window_s = config.poll.settle_window_s;
  p.clock = &clock;
  p.log = [log](std::string_view line) { log->info("{}", line); };
  p.offload = [&store](std::function<void()> work, std::function<void()> then) {
    store.Write(
        [work = std::move(work)](store::Store&) {
          work();
          return Status::Ok();
        },
        [then = std::move(then)](Status) { then(); });
  };
  p.writer = &store.writer();
  p.write_soon = [&store](std::function<Status()> work) {
    store.WriteSoon([work = std::move(work)](store::Store&) { return work(); });
  };
  return p;
}

schedule::ListingHints::Options ListingOptions(const config::DaemonConfig& config) {
  return {.interval_s = config.poll.interval_s,
          .page_size = static_cast<int>(config.poll.listing_page_size),
          .hint = config.poll.hints};
}

std::unique_ptr<schedule::ListingHints> MakeListingHints(const config::DaemonConfig& config,
                                                        const ListingParts& p) {
  std::optional<int64_t> watermark;
  Result<std::map<std::string, int64_t>> stored = p.store->reads().repos().ListingWatermarks();
  if (stored.ok() && stored->count(kListingSource)) watermark = stored->at(kListingSource);
  schedule::ListingHints::Deps deps;
  deps.clock = p.clock;
  deps.log = p.log;
  deps.metrics = p.metrics;
  deps.hub = p.hub;
  deps.tracked = [loop = p.loop] {
    std::vector<std::string> ids;
    ids.reserve(loop->scheduler().size());
    loop->scheduler().ForEach([&ids](std::string_view id, int64_t) { ids.emplace_back(id); });
    return ids;
  };
  deps.stored_head = [store = p.store](const std::string& repo) -> std::optional<std::string> {
    Result<std::optional<std::string>> head = store->reads().repos().GetRefHead(repo, "main");
    return head.ok() ? *head : std::nullopt;
  };
  deps.hint = [loop = p.loop, log = p.log](const std::string& repo, const std::string& sha) {
    log->debug("{}: the listing shows {}: polling it", repo, sha.substr(0, 12));
    loop->Hint(repo, store::PollTrigger::kListing);
  };
  deps.spend = [loop = p.loop, clock = p.clock](int64_t requests) {
    loop->scheduler().Spend(requests, clock->UnixSeconds());
  };
  deps.save_watermark = [store = p.store, clock = p.clock](int64_t covered_until) {
    store->WriteSoon([covered_until, now = clock->UnixSeconds()](store::Store& w) {
      return w.repos().SetListingWatermark(kListingSource, covered_until, now);
    });
  };
  if (schedule::FollowWatch* follow = p.follow) {
    deps.followed_owners = [follow] { return follow->owners(); };
    deps.follow_details = [follow] { return follow->needs_details(); };
    deps.listed = [follow](const std::vector<hub::ModelSummary>& items) { follow->Offer(items); };
  }
  return std::make_unique<schedule::ListingHints>(std::move(deps), ListingOptions(config),
                                                 watermark);
}

schedule::FollowWatch::Options FollowOptions(const config::DaemonConfig& config) {
  return {.reconcile_s = config.poll.reconcile_interval_s,
          .max_total = config.poll.max_followed_repos,
          .page_size = static_cast<int>(config.poll.listing_page_size)};
}

std::unique_ptr<schedule::FollowWatch> MakeFollowWatch(const config::DaemonConfig& config,
                                                      const ListingParts& p,
                                                      std::function<void()> announced,
                                                      store::FollowTargets targets) {
  schedule::FollowWatch::Deps deps;
  deps.clock = p.clock;
  deps.log = p.log;
  deps.metrics = p.metrics;
  deps.hub = p.hub;
  deps.store = p.store;
  deps.tracked = [loop = p.loop](const std::string& repo) {
    return loop->scheduler().tracked(repo);
  };
  deps.track = [loop = p.loop, clock = p.clock](const std::vector<std::string>& repos) {
    for (const std::string& id : repos) loop->scheduler().Track(id, clock->UnixSeconds());
    loop->Rearm();
  };
  deps.untrack = [loop = p.loop](const std::vector<std::string>& repos) {
    for (const std::string& id : repos) loop->scheduler().Untrack(id);
  };
  deps.spend = [loop = p.loop, clock = p.clock](int64_t requests) {
    loop->scheduler().Spend(requests, clock->UnixSeconds());
  };
  deps.announced = std::move(announced);
  deps.targets = std::move(targets);
  return std::make_unique<schedule::FollowWatch>(std::move(deps), FollowOptions(config));
}

std::vector<schedule::FollowState> FollowStates(const std::vector<store::FollowRuleRecord>& rules,
                                                spdlog::logger& log) {
  std::vector<schedule::FollowState> states;
  for (const store::FollowRuleRecord& r : rules) {
    nlohmann::json spec = nlohmann::json::parse(r.spec, nullptr, false);
    Result<config::FollowRule> rule = config::ParseFollowRule(spec, "follow rule " + r.name);
    if (!rule.ok()) {
      log.error("follow rule {} is damaged in the store and is left out: {}", r.name,
                rule.error().message);
      continue;
    }
    rule->name = r.name;
    states.push_back({.rule = std::move(rule).value(), .walked_at = r.walked_at,
                      .tracked = r.tracked});
  }
  return states;
}

void ApplyListing(std::unique_ptr<schedule::ListingHints>& listing,
                  const config::DaemonConfig& config, const ListingParts& p) {
  const bool follows = p.follow && !p.follow->rules().empty();
  if (!config.poll.hints && !follows) {
    if (std::exchange(listing, nullptr)) {
      p.log->info("change hints off: every repo is polled every {} s", config.poll.interval_s);
    }
    return;
  }
  if (listing) return listing->SetOptions(ListingOptions(config));
  listing = MakeListingHints(config, p);
  listing->Start();
  if (config.poll.hints) {
    p.log->info("change hints on: the Hub's listing every {} s, every repo reconciled every {} s",
                config.poll.interval_s, config.poll.reconcile_interval_s);
  } else {
    p.log->info("change hints off, follow rules on: the Hub's listing every {} s for new repos",
                config.poll.interval_s);
  }
}

void ApplyDerivatives(std::unique_ptr<schedule::DerivativeWatch>& watch,
                      const config::DaemonConfig& config, const ListingParts& p,
                      store::DerivativeTargets targets, std::function<void()> published) {
  const schedule::DerivativeWatch::Options options{.interval_s =
                                                       config.poll.derivatives_interval_s};
  if (!watch) {
    if (std::none_of(config.repos.begin(), config.repos.end(),
                     [](const config::RepoConfig& r) { return r.derivatives.enabled; })) {
      return;
    }
    schedule::DerivativeWatch::Deps deps;
    deps.clock = p.clock;
    deps.log = p.log;
    deps.metrics = p.metrics;
    deps.hub = p.hub;
    deps.store = p.store;
    deps.polls_idle = [loop = p.loop, clock = p.clock] {
      const int64_t now = clock->UnixSeconds();
      std::optional<int64_t> wake = loop->scheduler().NextWake(now);
      return loop->polls_in_flight() == 0 && (!wake || *wake > now);
    };
    deps.spend = [loop = p.loop, clock = p.clock](int64_t requests) {
      loop->scheduler().Spend(requests, clock->UnixSeconds());
    };
    deps.published = std::move(published);
    watch = std::make_unique<schedule::DerivativeWatch>(std::move(deps), options);
    watch->Start();
  }
  watch->SetOptions(options);
  watch->SetTargets(std::move(targets));
  watch->SetRepos(config.repos);
}

}  // namespace hubwatch::app
