#include "daemon/subscriptions/webhooks.h"

#include <boost/asio/io_context.hpp>
#include <chrono>

#include "daemon/subscriptions/config_sync.h"
#include "daemon/subscriptions/curl_webhook_sender.h"
#include "daemon/subscriptions/deliverer.h"
#include "daemon/subscriptions/matcher.h"
#include "daemon/subscriptions/subscriptions_api.h"
#include "hubwatch/version.h"
#include "tracker/hub/clock.h"
#include "tracker/hub/random.h"

namespace hubwatch::subscriptions {
namespace {

int64_t WallSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

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
        random(hub::MakeSystemRandom()),
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
  std::unique_ptr<hub::Clock> clock;
  std::unique_ptr<hub::Random> random;
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

void Webhooks::Start(const cli::DaemonConfig& config, std::function<void(Status)> done) {
  Sync(config, [this, done = std::move(done)](Status s) {
    if (s.ok() && !parts_->started) {
      parts_->started = true;
      parts_->deliverer->Start();
    }
    done(s);
  });
}

void Webhooks::Reload(const cli::DaemonConfig& config, std::function<void(Status)> done) {
  Sync(config, [this, done = std::move(done)](Status s) {
    if (s.ok()) parts_->deliverer->Kick();
    done(s);
  });
}

void Webhooks::Sync(const cli::DaemonConfig& config, std::function<void(Status)> done) {
  const cli::WebhookConfig& w = config.webhooks;
  parts_->deliverer->SetPolicy(w.retry_for_s, std::chrono::seconds(w.timeout_s),
                               w.allow_private_targets);
  parts_->api.set_allow_private_targets(w.allow_private_targets);
  SyncConfigSubscriptions(config, parts_->store, parts_->matcher, WallSeconds(),
                          [this, done = std::move(done)](Result<store::Store::SubscriptionSync> r) {
                            if (!r.ok()) return done(r.error());
                            parts_->log("subscriptions: " + std::to_string(parts_->matcher.size()) +
                                        " active (" + std::to_string(r->added) + " added, " +
                                        std::to_string(r->updated) + " updated, " +
                                        std::to_string(r->removed) + " removed from the config)");
                            done(Status::Ok());
                          });
}

void Webhooks::Kick() {
  if (parts_->started) parts_->deliverer->Kick();
}

void Webhooks::Stop() {
  parts_->deliverer->Stop();
  parts_->sender.Shutdown();
}

api::SubscriptionsHandler* Webhooks::handler() { return &parts_->api; }

std::function<std::vector<std::string>(const std::string&, const diff::Change&)>
Webhooks::outbox_targets() {
  return parts_->matcher.AsFunction();
}

}  // namespace hubwatch::subscriptions
