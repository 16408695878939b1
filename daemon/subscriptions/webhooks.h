#pragma once

// Webhooks: the subscription side of `hubwatch serve` in one object - the matcher the poller
// asks for outbox targets, the admin API's subscription handler, and the deliverer draining the
// durable outbox over a libcurl sender.
//
//   Apply(...)      the config's subscriptions were written to the store (a start or a
//                   reload): the delivery policy, the matcher reloaded, delivering started on
//                   the first call (rows left pending by an earlier run included), kicked later
//   Kick()          new outbox rows were committed
//   Stop()          no new attempts; transfers in flight are cut (not counted as attempts)
//
// Thread safety: the network thread (the one running `io`), except outbox_targets(), which the
// poller may call on the store thread (the matcher is thread-safe). REQUIRES: io, store and
// metrics outlive the object; Stop() before io stops running.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/config.h"
#include "estimator/base/result.h"
#include "tracker/diff/change.h"
#include "tracker/pipeline/poller.h"
#include "tracker/store/store.h"

namespace boost::asio {
class io_context;
}
namespace hubwatch::api {
class SubscriptionsHandler;
}
namespace hubwatch::service {
class Metrics;
class StoreAccess;
}  // namespace hubwatch::service

namespace hubwatch::subscriptions {

class Webhooks {
 public:
  using Log = std::function<void(std::string_view)>;
  Webhooks(boost::asio::io_context& io, service::StoreAccess& store, service::Metrics& metrics,
           Log log);
  ~Webhooks();
  Webhooks(const Webhooks&) = delete;
  Webhooks& operator=(const Webhooks&) = delete;

  // `subscriptions`: every subscription in the store after the write; `sync`: what the write
  // changed among the config's. Cannot fail.
  void Apply(const config::WebhookConfig& policy,
             const std::vector<store::Subscription>& subscriptions,
             const store::SubscriptionSync& sync);
  void Kick();
  void Stop();

  api::SubscriptionsHandler* handler();
  pipeline::OutboxTargets outbox_targets();
  // A derivative's advisory is news, never history.
  store::DerivativeTargets derivative_targets();
  // The subscriptions that asked for a follow event.
  store::FollowTargets follow_targets();

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

}  // namespace hubwatch::subscriptions
