#pragma once

// fakehub's webhook deliveries: Hub-format JSON POSTed, in order, from one background thread to
// one loopback receiver, with X-Webhook-Secret and a short timeout, no retry. Each delivery is
// reported through `log` (server "webhook"; status 0 when the receiver could not be reached or
// did not answer in time). The payloads are built by HubState (hub_events.cc).
//
// Thread safety: Enqueue() and Stop() may be called from any thread; `log` is called on the
// delivery thread with no lock of the sender held. The sender owns its thread; Stop() (or the
// destructor) finishes the delivery in flight, drops the rest and joins.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "estimator/base/result.h"
#include "tests/fakehub/fakehub.h"

namespace hubwatch::fakehub {

struct WebhookTarget {
  std::string host;  // an IPv4 address in 127.0.0.0/8
  uint16_t port = 80;
  std::string target = "/";  // path and query, as sent
};

// "http://127.0.0.1:8080/hook?x=1". Anything but plain http to a 127.0.0.0/8 address is refused.
Result<WebhookTarget> ParseWebhookUrl(const std::string& url);

class WebhookSender {
 public:
  using LogFn = std::function<void(LoggedRequest)>;
  WebhookSender(WebhookTarget target, std::string secret, LogFn log,
                std::chrono::milliseconds timeout = std::chrono::seconds(2));
  ~WebhookSender();
  WebhookSender(const WebhookSender&) = delete;
  WebhookSender& operator=(const WebhookSender&) = delete;

  void Enqueue(std::string body);
  void Stop();

 private:
  void Run();
  int Deliver(const std::string& body);  // the receiver's status, 0 on failure

  const WebhookTarget target_;
  const std::string secret_;
  const LogFn log_;
  const std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::string> queue_;  // guarded by mutex_
  bool stopping_ = false;          // guarded by mutex_
  std::thread thread_;
};

}  // namespace hubwatch::fakehub
