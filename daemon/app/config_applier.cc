#include "daemon/app/config_applier.h"

#include <spdlog/spdlog.h>

namespace hubwatch::app {

void ConfigApplier::WriteToStore(const PreparedConfig& config, std::shared_ptr<ConfigWrite> wrote,
                                 std::function<void(Status)> done) {
  p_.store->Write(
      [&config, wrote, now = p_.clock->UnixSeconds()](store::Store& w) -> Status {
        Result<ConfigWrite> r = WriteConfig(w, config, now);
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
  if (p_.control->started()) StartBackgroundReads(config);  // the start begins them later
  pipeline::PollerOptions options = PollerOptionsFor(config, *p_.clock, *p_.store, p_.log);
  options.outbox_targets = p_.webhooks->outbox_targets();
  // Running polls hold a reference to the poller: keep the one object, renew its options.
  if (poller_) {
    poller_->SetOptions(std::move(options));
  } else {
    poller_ = std::make_unique<pipeline::Poller>(*p_.hub, p_.store->reads(), std::move(options));
  }
  schedule::Scheduler& scheduler = p_.loop->scheduler();
  for (const std::string& id : wrote.untracked) {
    scheduler.Untrack(id);
    p_.log->info("{}: untracked, the configuration no longer lists it", id);
  }
  for (const store::RepoSchedule& r : wrote.repos) {
    if (!scheduler.tracked(r.id)) scheduler.Track(r.id, scheduler.Batched(r.next_poll_at));
  }
  p_.control->UpdateRepoGauge();
  p_.webhooks->Apply(config.webhooks, wrote.all_subscriptions, wrote.subscriptions);
  p_.loop->Rearm();
}

void ConfigApplier::StartBackgroundReads(const config::DaemonConfig& config) {
  ApplyListing(listing_, config, Listing());
  ApplyDerivatives(derivatives_, config, Listing(), p_.webhooks->derivative_targets(),
                   p_.published);
}

void ConfigApplier::StopBackgroundReads() {
  if (listing_) listing_->Stop();
  if (derivatives_) derivatives_->Stop();
}

ListingParts ConfigApplier::Listing() const {
  return {.clock = p_.timers,
          .log = p_.log,
          .metrics = p_.metrics,
          .hub = p_.hub,
          .store = p_.store,
          .loop = p_.loop};
}

}  // namespace hubwatch::app
