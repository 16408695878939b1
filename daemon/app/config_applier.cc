#include "daemon/app/config_applier.h"

#include <spdlog/spdlog.h>

namespace hubwatch::app {

void ConfigApplier::WriteToStore(const PreparedConfig& config, std::shared_ptr<ConfigWrite> wrote,
                                 std::function<void(Status)> done) {
  p_.store->Write(
      [&config, wrote, now = p_.clock->UnixSeconds(),
       targets = p_.webhooks->follow_targets()](store::Store& w) -> Status {
        Result<ConfigWrite> r = WriteConfig(w, config, now, targets);
        if (!r.ok()) return r.error();
        *wrote = std::move(r).value();
        return Status::Ok();
      },
      std::move(done));
}

void ConfigApplier::Apply(const PreparedConfig& prepared, const ConfigWrite& wrote) {
  const config::DaemonConfig& config = prepared.config;
  // The scheduler's and the poller's options; running polls keep their own.
  p_.loop->SetOptions(SchedulerOptionsFor(config, p_.has_token));
  poll_ = config.poll;
  pipeline::PollerOptions options = PollerOptionsFor(config, *p_.clock, *p_.store, p_.log);
  options.outbox_targets = p_.webhooks->outbox_targets();
  // Running polls hold a reference to the poller: keep the one object, renew its options.
  if (poller_) {
    poller_->SetOptions(std::move(options));
  } else {
    poller_ = std::make_unique<pipeline::Poller>(*p_.hub, p_.store->reads(), std::move(options));
  }
  schedule::Scheduler& scheduler = p_.loop->scheduler();
  Untrack(wrote.untracked, "the configuration no longer lists it");
  Untrack(wrote.follow_untracked,
          "the configuration no longer has the follow rule that brought it; its history is kept");
  follow_rules_ = wrote.follow_rules;
  for (const store::RepoSchedule& r : wrote.repos) {
    if (!scheduler.tracked(r.id)) scheduler.Track(r.id, scheduler.Batched(r.next_poll_at));
  }
  p_.control->UpdateRepoGauge();
  p_.webhooks->Apply(config.webhooks, wrote.all_subscriptions, wrote.subscriptions);
  p_.loop->Rearm();
  if (p_.control->started()) StartBackgroundReads(config);  // the start begins them later
}

void ConfigApplier::Untrack(const std::vector<std::string>& repos, const char* why) {
  for (const std::string& id : repos) {
    p_.loop->scheduler().Untrack(id);
    p_.log->info("{}: untracked, {}", id, why);
  }
  if (!repos.empty()) p_.control->UpdateRepoGauge();
}

void ConfigApplier::FollowRulesChanged(const std::vector<std::string>& untracked) {
  Untrack(untracked, "its follow rule was removed; its history is kept");
  Result<std::vector<store::FollowRuleRecord>> rules = p_.store->reads().follows().ListRules();
  if (!rules.ok()) {
    p_.log->error("reading the follow rules failed: {}", rules.error().message);
    return;
  }
  follow_rules_ = std::move(rules).value();
  if (!poll_ || !p_.control->started()) return;  // the start applies them
  config::DaemonConfig polling;
  polling.poll = *poll_;
  ApplyFollowAndListing(polling);
}

void ConfigApplier::StartBackgroundReads(const config::DaemonConfig& config) {
  ApplyFollowAndListing(config);
  ApplyDerivatives(derivatives_, config, Listing(), p_.webhooks->derivative_targets(),
                   p_.published);
}

void ConfigApplier::ApplyFollowAndListing(const config::DaemonConfig& config) {
  if (!follow_) {
    follow_ = MakeFollowWatch(config, Listing(), p_.published, p_.webhooks->follow_targets());
    follow_->Start();
  }
  follow_->SetOptions(FollowOptions(config));
  follow_->SetRules(FollowStates(follow_rules_, *p_.log));
  ApplyListing(listing_, config, Listing());
}

api::FollowRuntime ConfigApplier::FollowRuntime(const std::string& rule) const {
  api::FollowRuntime out;
  if (listing_ && listing_->last_mode()) {
    out.listing_mode = std::string(schedule::ListingModeName(*listing_->last_mode()));
  }
  if (!follow_) return out;
  for (const schedule::FollowState& r : follow_->rules()) {
    if (r.rule.name != rule) continue;
    out.capped = r.capped;
    out.walk_requests = r.requests;
  }
  return out;
}

void ConfigApplier::StopBackgroundReads() {
  if (listing_) listing_->Stop();
  if (follow_) follow_->Stop();
  if (derivatives_) derivatives_->Stop();
}

ListingParts ConfigApplier::Listing() const {
  return {.clock = p_.timers,
          .log = p_.log,
          .metrics = p_.metrics,
          .hub = p_.hub,
          .store = p_.store,
          .loop = p_.loop,
          .follow = follow_.get()};
}

}  // namespace hubwatch::app
