#pragma once

// CurlWebhookSender: WebhookSender on libcurl multi, driven by a thread of its own with
// curl_multi_poll (webhooks are few, so no Asio socket glue). Each address curl is about to
// connect to passes through CURLOPT_OPENSOCKETFUNCTION and the target policy first, so a name
// that resolves (or re-resolves) to an inner address is refused at connect time; proxies from
// the environment are ignored for the same reason. Response bodies are read up to 64 KiB.
//
// Thread safety: Post and Shutdown on the loop thread that runs `io`; completions are posted
// to `io`, and each transfer in flight holds `io` busy (a work guard) so io.run() waits for it.
// REQUIRES: io outlives the sender.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "daemon/subscriptions/webhook_sender.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace hubwatch::subscriptions {

struct CurlWebhookSenderOptions {
  size_t max_concurrent = 16;  // transfers at once; more wait in a queue
  std::string user_agent;      // e.g. "hubwatch/0.1.0"; the caller's headers may also set it
  // Tests: CURLOPT_RESOLVE entries ("host:port:address"), a DNS answer without DNS.
  std::vector<std::string> resolve{};
};

class CurlWebhookSender final : public WebhookSender {
 public:
  explicit CurlWebhookSender(boost::asio::io_context& io, CurlWebhookSenderOptions options = {});
  ~CurlWebhookSender() override;  // Shutdown()
  CurlWebhookSender(const CurlWebhookSender&) = delete;
  CurlWebhookSender& operator=(const CurlWebhookSender&) = delete;

  void Post(WebhookRequest request, WebhookCallback done) override;
  // Fails queued and running transfers with kShutdown and joins the thread. Idempotent; Post
  // after it fails at once (asynchronously).
  void Shutdown();

 private:
  class Worker;
  std::unique_ptr<Worker> worker_;
};

}  // namespace hubwatch::subscriptions
