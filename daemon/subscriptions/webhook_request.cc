#include "daemon/subscriptions/webhook_request.h"

#include "daemon/subscriptions/signature.h"
#include "daemon/subscriptions/target_policy.h"

namespace hubwatch::subscriptions {

Result<WebhookRequest> SignedRequest(const store::Delivery& d, const std::string& webhook_id,
                                     int64_t timestamp, const RequestSettings& settings) {
  Result<std::string> key = ParseSecret(d.secret);
  if (!key.ok()) {
    return Error::InvalidInput("refused: the subscription's secret is not valid: " +
                               key.error().message);
  }
  Status url_ok = CheckTargetUrl(d.url, settings.allow_private_targets);
  if (!url_ok.ok()) return Error::InvalidInput("refused: " + url_ok.error().message);
  WebhookRequest request;
  request.url = d.url;
  request.body = d.body;
  request.timeout = settings.timeout;
  request.allow_private_targets = settings.allow_private_targets;
  request.headers.Add("Content-Type", "application/json");
  if (!settings.user_agent.empty()) request.headers.Add("User-Agent", settings.user_agent);
  request.headers.Add("webhook-id", webhook_id);
  request.headers.Add("webhook-timestamp", std::to_string(timestamp));
  request.headers.Add("webhook-signature", Sign(*key, webhook_id, timestamp, d.body));
  return request;
}

}  // namespace hubwatch::subscriptions
