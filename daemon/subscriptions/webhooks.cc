#include "daemon/subscriptions/webhooks.h"

#include <boost/asio/io_context.hpp>
#include <chrono>

#include "daemon/subscriptions/curl_webhook_sender.h"
#include "daemon/subscriptions/deliverer.h"
#include "daemon/subscriptions/matcher.h"
#include "daemon/subscriptions/subscriptions_api.h"
#include "estimator/base/clock.h"
#include "estimator/base/random.h"
#include "hubwatch/version.h"
#include "tracker/hub/asio_clock.h"

namespace hubwatch::subscriptions {
namespace {

std::string UserAgent() { return std::string("hubwatch/") + kVersion; }

}  // namespace

// Declaration order is destruction order reversed: the deliverer goes before its sender, clock
// and random; the API handler before the matcher.
struct Webhooks::Parts {
  Parts(boost::asio::io_context& io, service::StoreAccess& store_access, service::Metrics& m,
        Log log_fn)
      : store(store_access),
        log(std::move(log_fn)),
        clock(hub::MakeAsioClock(io)),
        random(MakeSystemRandom()),
        sender(io, CurlWebhookSenderOptions{.user_agent = UserAgent()}),
        api(store, matcher, /*allow_private_targets=*/false) {
    DelivererOptions options;
    options.user_agent = UserAgent();
    options.metrics = &m;
    options.log = log;
    options.on_disabled = [this](int64_t) { (void)matcher.Refresh(store.reads()); };
    deliverer = std::make_unique<WebhookDeliverer>(store, sender, *clock, *random, options);
    api.on_change = [this] { deliverer->Kick(); };
  }

  service::StoreAccess& store;
  Log log;
  std::unique_ptr<TimerClock> clock;
  std::unique_ptr<Random> random;
  SubscriptionMatcher matcher;
  CurlWebhookSender sender;
  SubscriptionsApi api;
  std::unique_ptr<WebhookDeliverer> deliverer;
  bool started = false;
};

Webhooks::Webhooks(boost::asio::io_context& io, service::StoreAccess& store,
                   service::Metrics& metrics, Log log)
    : parts_(std::make_unique<Parts>(io, store, metrics, std::move(log))) {}

Webhooks::~Webhooks() { Stop(); }

void Webhooks::Apply(const config::WebhookConfig& policy,
                     const std::vector<store::Subscription>& subscriptions,
                     const store::SubscriptionSync& sync) {
  parts_->deliverer->SetPolicy(policy.retry_for_s, std::chrono::seconds(policy.timeout_s),
                               policy.allow_private_targets);
  parts_->api.set_allow_private_targets(policy.allow_private_targets);
  parts_->matcher.Reset(subscriptions);
  parts_->log("subscriptions: " + std::to_string(parts_->matcher.size()) + " active (" +
              std::to_string(sync.added) + " added, " + std::to_string(sync.updated) +
              " updated, " + std::to_string(sync.removed) + " removed from the config)");
  if (!parts_->started) {
    parts_->started = true;
    parts_->deliverer->Start();
  } else {
    parts_->deliverer->Kick();
  }
}

void Webhooks::Kick() {
  if (parts_->started) parts_->deliverer->Kick();
}

void Webhooks::Stop() {
  parts_->deliverer->Stop();
  parts_->sender.Shutdown();
}

api::SubscriptionsHandler* Webhooks::handler() { return &parts_->api; }

pipeline::OutboxTargets Webhooks::outbox_targets() { return parts_->matcher.AsFunction(); }

store::FollowTargets Webhooks::follow_targets() { return parts_->matcher.AsFollowTargets(); }

store::DerivativeTargets Webhooks::derivative_targets() {
  return [matcher = &parts_->matcher](const std::string& derivative, const diff::Change& change) {
    return matcher->Targets(derivative, change, /*history=*/false);
  };
}

}  // namespace hubwatch::subscriptions
