#include "daemon/subscriptions/curl_webhook_sender.h"

#include <arpa/inet.h>
#include <curl/curl.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "daemon/subscriptions/target_policy.h"

namespace hubwatch::subscriptions {
namespace {

namespace asio = boost::asio;
using WorkGuard = asio::executor_work_guard<asio::io_context::executor_type>;

constexpr size_t kMaxResponseBytes = 64 << 10;
constexpr std::chrono::milliseconds kMaxConnectTimeout{10'000};
constexpr int kIdleWaitMs = 60'000;  // nothing in flight: wait for a wakeup

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

hub::TransportErrorKind KindOf(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return hub::TransportErrorKind::kTimeout;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
      return hub::TransportErrorKind::kConnect;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
      return hub::TransportErrorKind::kConnectionReset;
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      return hub::TransportErrorKind::kProtocol;
    default:
      return hub::TransportErrorKind::kOther;
  }
}

std::string AddressText(const sockaddr* a) {
  char text[INET6_ADDRSTRLEN] = {};
  if (a->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a)->sin_addr, text, sizeof text);
  } else if (a->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, text, sizeof text);
  }
  return text;
}

// One POST, from Post() to its completion. Owned by the worker thread once queued.
struct Transfer {
  Transfer(WebhookRequest r, WebhookCallback d, WorkGuard g)
      : request(std::move(r)), done(std::move(d)), guard(std::move(g)) {}
  ~Transfer() {
    if (easy) curl_easy_cleanup(easy);
    curl_slist_free_all(headers);
  }
  WebhookRequest request;
  WebhookCallback done;
  WorkGuard guard;  // keeps io.run() going until `done` is posted
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  char error_buffer[CURL_ERROR_SIZE] = {};
  hub::HttpResponse response;
  std::string refused;  // why OnOpenSocket refused an address, if it did
};

size_t OnWrite(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (t->response.body.size() + n > kMaxResponseBytes) {
    t->response.body_limit_hit = true;
    return 0;  // stop reading: only the status matters
  }
  t->response.body.append(data, n);
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  std::string_view line(data, n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.starts_with("HTTP/")) {
    t->response.headers = hub::HttpHeaders();  // a new response (after 100 Continue)
    return n;
  }
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    t->response.headers.Add(std::string(hub::TrimWhitespace(line.substr(0, colon))),
                            std::string(hub::TrimWhitespace(line.substr(colon + 1))));
  }
  return n;
}

curl_socket_t OnOpenSocket(void* user, curlsocktype, curl_sockaddr* address) {
  auto* t = static_cast<Transfer*>(user);
  if (!t->request.allow_private_targets) {
    const std::optional<std::string_view> why = NonPublicReason(&address->addr, address->addrlen);
    if (why) {
      t->refused = "refused to connect to a " + std::string(*why) + " address (" +
                   AddressText(&address->addr) + ")";
      return CURL_SOCKET_BAD;
    }
  }
  return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

}  // namespace

class CurlWebhookSender::Worker {
 public:
  Worker(asio::io_context& io, CurlWebhookSenderOptions options)
      : io_(io), options_(std::move(options)) {
    GlobalInit();
    multi_ = curl_multi_init();
    for (const std::string& entry : options_.resolve) {
      resolve_ = curl_slist_append(resolve_, entry.c_str());
    }
    thread_ = std::thread([this] { Run(); });
  }
  ~Worker() {
    Shutdown();
    curl_multi_cleanup(multi_);
    curl_slist_free_all(resolve_);
  }

  void Post(WebhookRequest request, WebhookCallback done) {
    auto t =
        std::make_unique<Transfer>(std::move(request), std::move(done), asio::make_work_guard(io_));
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stopped_) {
        queue_.push_back(std::move(t));
        curl_multi_wakeup(multi_);
        return;
      }
    }
    Fail(std::move(t), hub::TransportErrorKind::kShutdown, "the webhook sender is shut down");
  }

  void Shutdown() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
    }
    curl_multi_wakeup(multi_);
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run() {
    std::map<CURL*, std::unique_ptr<Transfer>> running;
    for (;;) {
      std::vector<std::unique_ptr<Transfer>> starting;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopped_) break;
        while (!queue_.empty() && running.size() + starting.size() < options_.max_concurrent) {
          starting.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      for (std::unique_ptr<Transfer>& t : starting) {
        if (!Setup(*t)) {
          Fail(std::move(t), hub::TransportErrorKind::kOther, "could not set up the transfer");
          continue;
        }
        curl_multi_add_handle(multi_, t->easy);
        running.emplace(t->easy, std::move(t));
      }
      int still_running = 0;
      curl_multi_perform(multi_, &still_running);
      int left = 0;
      while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
        if (m->msg != CURLMSG_DONE) continue;
        auto it = running.find(m->easy_handle);
        if (it == running.end()) continue;
        const CURLcode code = m->data.result;
        curl_multi_remove_handle(multi_, it->first);
        Complete(std::move(it->second), code);
        running.erase(it);
      }
      // Idle, it sleeps until Post or Shutdown wakes it (curl_multi_wakeup is not lost when it
      // comes first); the bound is a safety net, not a tick.
      curl_multi_poll(multi_, nullptr, 0, running.empty() ? kIdleWaitMs : 1000, nullptr);
    }
    for (auto& [easy, t] : running) {
      curl_multi_remove_handle(multi_, easy);
      Fail(std::move(t), hub::TransportErrorKind::kShutdown, "the webhook sender shut down");
    }
    std::deque<std::unique_ptr<Transfer>> queued;
    {
      std::lock_guard<std::mutex> lock(mu_);
      queued.swap(queue_);
    }
    for (std::unique_ptr<Transfer>& t : queued) {
      Fail(std::move(t), hub::TransportErrorKind::kShutdown, "the webhook sender shut down");
    }
  }

  bool Setup(Transfer& t) {
    CURL* e = curl_easy_init();
    if (!e) return false;
    t.easy = e;
    const WebhookRequest& r = t.request;
    for (const auto& [name, value] : r.headers.entries()) {
      t.headers = curl_slist_append(t.headers, (name + ": " + value).c_str());
    }
    t.headers = curl_slist_append(t.headers, "Expect:");  // no 100-continue round trip
    const auto connect_timeout = std::min(r.timeout, kMaxConnectTimeout);
    curl_easy_setopt(e, CURLOPT_URL, r.url.c_str());
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.headers);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_PROXY, "");  // environment proxies would bypass the policy
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout.count()));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout.count()));
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.error_buffer);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &OnWrite);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &OnHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &OnOpenSocket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, &t);
    if (!options_.user_agent.empty()) {
      curl_easy_setopt(e, CURLOPT_USERAGENT, options_.user_agent.c_str());
    }
    if (resolve_) curl_easy_setopt(e, CURLOPT_RESOLVE, resolve_);
    return true;
  }

  void Complete(std::unique_ptr<Transfer> t, CURLcode code) {
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    t->response.status = static_cast<int>(status);
    t->response.url = t->request.url;
    curl_off_t sent = 0;
    curl_easy_getinfo(t->easy, CURLINFO_REQUEST_SIZE, &sent);
    t->response.bytes_sent = static_cast<uint64_t>(sent) + t->request.body.size();
    hub::TransportOutcome outcome;
    const bool cut_on_purpose = code == CURLE_WRITE_ERROR && t->response.body_limit_hit;
    if (code != CURLE_OK && !cut_on_purpose) {
      hub::TransportError error;
      error.kind = KindOf(code);
      error.curl_code = static_cast<int>(code);
      if (!t->refused.empty() && error.kind == hub::TransportErrorKind::kConnect) {
        error.message = t->refused;
      } else {
        error.message = t->error_buffer[0] ? t->error_buffer : curl_easy_strerror(code);
      }
      outcome.error = std::move(error);
    }
    outcome.response = std::move(t->response);
    Deliver(std::move(t), std::move(outcome));
  }

  void Fail(std::unique_ptr<Transfer> t, hub::TransportErrorKind kind, std::string message) {
    hub::TransportOutcome outcome;
    outcome.error = hub::TransportError{kind, 0, std::move(message)};
    Deliver(std::move(t), std::move(outcome));
  }

  // Posts the completion to the loop, then lets the transfer (and its work guard) go.
  void Deliver(std::unique_ptr<Transfer> t, hub::TransportOutcome outcome) {
    asio::post(io_, [done = std::move(t->done), outcome = std::move(outcome)]() mutable {
      done(std::move(outcome));
    });
  }

  asio::io_context& io_;
  const CurlWebhookSenderOptions options_;
  CURLM* multi_ = nullptr;
  curl_slist* resolve_ = nullptr;
  std::mutex mu_;
  bool stopped_ = false;
  std::deque<std::unique_ptr<Transfer>> queue_;
  std::thread thread_;
};

CurlWebhookSender::CurlWebhookSender(asio::io_context& io, CurlWebhookSenderOptions options)
    : worker_(std::make_unique<Worker>(io, std::move(options))) {}
CurlWebhookSender::~CurlWebhookSender() { Shutdown(); }

void CurlWebhookSender::Post(WebhookRequest request, WebhookCallback done) {
  worker_->Post(std::move(request), std::move(done));
}
void CurlWebhookSender::Shutdown() { worker_->Shutdown(); }

}  // namespace hubwatch::subscriptions
