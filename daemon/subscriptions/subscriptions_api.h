#pragma once

// SubscriptionsApi: the subscriptions side of the admin API (api::SubscriptionsHandler). The
// API checks the admin token and parses the JSON; this decides the rest.
//
//   Create(body)  POST /api/v1/subscriptions
//                 {"url": "https://...", "repos": "*", "kinds": [], "min_impact": "behavioral",
//                  "backfill": false (true: history too),
//                  "secret": "whsec_..." (optional; generated when absent)}
//                 201 {subscription..., "secret": "whsec_..."}: the only reply that shows it
//                 400 {"error"} for a bad body, URL (target policy), filter or secret
//                 409 when a config subscription has that URL
//   List()        GET /api/v1/subscriptions
//                 200 {"subscriptions": [{id, url, repos, kinds, min_impact, backfill, source,
//                       disabled,
//                       disabled_reason, disabled_at, created_at, pending, delivered, failed}]}
//   Remove(id)    DELETE /api/v1/subscriptions/{id}
//                 204; 404 unknown id; 409 for a config subscription (edit the file instead);
//                 its pending deliveries fail
// Times are RFC 3339 UTC. Store errors are 500 {"error"}. Secrets never appear in List or in
// an error. Writes go through StoreAccess::Write; `done` runs on the network thread.
//
// Thread safety: the network thread only. REQUIRES: the collaborators outlive the object.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/api/subscriptions_handler.h"
#include "daemon/service/store_access.h"
#include "daemon/subscriptions/matcher.h"
#include "estimator/base/clock.h"

namespace hubwatch::subscriptions {

class SubscriptionsApi final : public api::SubscriptionsHandler {
 public:
  // REQUIRES: clock outlives the handler.
  SubscriptionsApi(service::StoreAccess& store, SubscriptionMatcher& matcher,
                   bool allow_private_targets, const Clock& clock = SystemClock());

  void Create(const nlohmann::json& body, Done done) override;
  void List(Done done) override;
  void Remove(const std::string& id, Done done) override;

  // A reloaded config.
  void set_allow_private_targets(bool allow) { allow_private_ = allow; }
  // Runs after a subscription was created or removed, once the matcher is refreshed (e.g. the
  // deliverer's Kick).
  std::function<void()> on_change;

 private:
  void Changed();

  service::StoreAccess& store_;
  SubscriptionMatcher& matcher_;
  bool allow_private_;
  const Clock& clock_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace hubwatch::subscriptions
