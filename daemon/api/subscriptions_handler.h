#pragma once

// SubscriptionsHandler: the logic behind the admin endpoints
//
//   POST   /api/v1/subscriptions        Create(body)   body: the request's JSON (an object)
//   GET    /api/v1/subscriptions        List()
//   DELETE /api/v1/subscriptions/{id}   Remove(id)
//
// implemented by the subscriptions/webhooks code and handed to ApiServer (ApiDeps). The API
// checks the admin token and parses the JSON before calling; the handler decides everything
// else, replies with status and body (errors as HttpReply::Error, {"error": "..."}).
//
// Each method calls `done` exactly once, on the network thread: at once, or after a write
// through StoreAccess::Write (whose `then` already runs on the network thread). Writes must not
// use StoreAccess::reads(). Without a handler the endpoints answer 503
// {"error": "subscriptions are not configured"}.
//
// Thread safety: called on the network thread only.

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "daemon/api/http_message.h"

namespace hubwatch::api {

class SubscriptionsHandler {
 public:
  using Done = std::function<void(HttpReply)>;
  virtual ~SubscriptionsHandler() = default;

  // 201 with the subscription (secrets only as they may be shown), 400 for a bad one.
  virtual void Create(const nlohmann::json& body, Done done) = 0;
  // 200 {"subscriptions": [...]}.
  virtual void List(Done done) = 0;
  // 204, or 404 when there is no such subscription. `id` is the path segment, decoded.
  virtual void Remove(const std::string& id, Done done) = 0;
};

}  // namespace hubwatch::api
