#include "tracker/hub/curl_transport.h"

#include <curl/curl.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "estimator/base/clock.h"
#include "tracker/hub/curl_sockets.h"
#include "tracker/hub/curl_transfer.h"

namespace hubwatch::hub {
namespace {

namespace asio = boost::asio;

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The multi's one timer (CURLMOPT_TIMERFUNCTION): Set(-1) cancels, Set(0) posts `expire` to the
// next loop turn, Set(ms) arms the steady_timer; `expire` never runs inside curl. After each
// expiry, when nothing is pending, curl's next deadline is read back (`next_ms`).
class MultiTimer {
 public:
  MultiTimer(asio::io_context& io, std::function<void()> expire, std::function<long()> next_ms)
      : io_(io), timer_(io), expire_(std::move(expire)), next_ms_(std::move(next_ms)) {}

  void Set(long timeout_ms) {
    if (timeout_ms < 0) {
      ++generation_;
      armed_ = false;
      timer_.cancel();
      return;
    }
    if (timeout_ms == 0) {
      // "As soon as possible" (every curl_multi_add_handle asks for it): a posted handler, not
      // the timer. Arming an Asio timer that becomes the earliest reprograms the reactor's
      // timerfd, a syscall that cost 14% of an unchanged poll cycle. The armed timer, if any,
      // stays: waking then is harmless.
      if (posted_) return;
      posted_ = true;
      std::weak_ptr<bool> alive = alive_;
      asio::post(io_, [this, alive] {
        if (alive.expired()) return;
        posted_ = false;
        Expire();
      });
      return;
    }
    const SteadyTime deadline = SystemClock().Now() + std::chrono::milliseconds(timeout_ms);
    // A pending wake-up that comes no later is kept: it saves re-programming the timer on every
    // call. Waking early is harmless, but curl does not announce again a deadline it already
    // gave (update_timer skips an unchanged one), so Expire() reads it back.
    if (armed_ && deadline_ <= deadline) return;
    const uint64_t generation = ++generation_;
    armed_ = true;
    deadline_ = deadline;
    timer_.expires_at(deadline);
    std::weak_ptr<bool> alive = alive_;
    timer_.async_wait([this, alive, generation](boost::system::error_code ec) {
      if (ec || alive.expired() || generation != generation_) return;
      armed_ = false;
      Expire();
    });
  }

 private:
  // Without the read-back a deadline curl announced while an earlier wake-up was kept would be
  // lost, and a transfer waiting on it would stall until its own timeout.
  void Expire() {
    expire_();
    if (armed_ || posted_) return;
    if (const long next = next_ms_(); next >= 0) Set(next);
  }

  asio::io_context& io_;
  asio::steady_timer timer_;
  std::function<void()> expire_;
  std::function<long()> next_ms_;
  uint64_t generation_ = 0;
  bool armed_ = false;
  bool posted_ = false;  // a zero timeout's expiry is posted, not yet run
  SteadyTime deadline_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // handlers hold weak_ptrs
};

// libcurl 7.88 (Debian 12) can leave an h2 stream's data read from the socket but not handed to
// its transfer, with no timer set and no socket event to come: the transfer stalls until its
// timeout (tests/hub/tls_wire_test.cc saw it in one run of two: 32 concurrent 100 KB range
// reads multiplexed on one connection). While armed, every 100 ms `tick` runs (the engine
// reports each socket curl reads from as readable once, so curl runs every transfer on it and
// drains what is buffered; a socket with nothing to read costs one EAGAIN); it re-arms while
// `tick` returns true.
class StallGuard {
 public:
  StallGuard(asio::io_context& io, std::function<bool()> tick)
      : timer_(io), tick_(std::move(tick)) {}

  void Arm() {
    if (armed_) return;
    armed_ = true;
    timer_.expires_after(std::chrono::milliseconds(100));
    std::weak_ptr<bool> alive = alive_;
    timer_.async_wait([this, alive](boost::system::error_code ec) {
      if (alive.expired()) return;
      armed_ = false;
      if (!ec && tick_()) Arm();
    });
  }
  void Stop() { timer_.cancel(); }

 private:
  asio::steady_timer timer_;
  std::function<bool()> tick_;
  bool armed_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace

class CurlTransport::Engine {
 public:
  Engine(asio::io_context& io, CurlTransportOptions options)
      : io_(io),
        options_(options),
        timer_(
            io, [this] { SocketAction(CURL_SOCKET_TIMEOUT, 0); },
            [this] {
              long ms = -1;
              return multi_ != nullptr && curl_multi_timeout(multi_, &ms) == CURLM_OK ? ms : -1L;
            }),
        stall_guard_(io, [this] { return KickReadable(); }),
        sockets_(io, [this](curl_socket_t fd, int events) { SocketAction(fd, events); }) {
    GlobalInitOnce();
    multi_ = curl_multi_init();
    sockets_.Attach(multi_);
    curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &Engine::OnTimer);
    curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
    curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, options_.max_host_connections);
    curl_multi_setopt(multi_, CURLMOPT_MAX_TOTAL_CONNECTIONS, options_.max_total_connections);
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, options_.connection_cache_size);
    curl_multi_setopt(multi_, CURLMOPT_PIPELINING,
                      options_.http2 ? CURLPIPE_MULTIPLEX : CURLPIPE_NOTHING);
    share_ = curl_share_init();
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  }

  ~Engine() { Shutdown(); }

  void Start(HttpRequest request, TransportCallback done) {
    if (multi_ == nullptr) {
      TransportOutcome outcome;
      outcome.error = TransportError{TransportErrorKind::kShutdown, 0, "transport shut down"};
      asio::post(io_, [done = std::move(done), outcome = std::move(outcome)]() mutable {
        done(std::move(outcome));
      });
      return;
    }
    auto transfer = std::make_unique<CurlTransfer>();
    transfer->request = std::move(request);
    transfer->done = std::move(done);
    queued_.push_back(std::move(transfer));
    StartQueued();
  }

  void Shutdown() {
    if (multi_ == nullptr) return;
    for (auto& [easy, transfer] : running_) {
      curl_multi_remove_handle(multi_, easy);
      FailLater(*transfer, "transport shut down");
    }
    running_.clear();
    for (auto& transfer : queued_) FailLater(*transfer, "transport shut down");
    queued_.clear();
    // multi_ is cleared first: the callbacks curl_multi_cleanup still makes (OnSocket REMOVE,
    // OnCloseSocket) must not call back into the multi handle being destroyed.
    CURLM* multi = multi_;
    multi_ = nullptr;
    sockets_.Detach();
    curl_multi_cleanup(multi);
    for (CURL* easy : idle_easies_) curl_easy_cleanup(easy);
    idle_easies_.clear();
    curl_share_cleanup(share_);  // every easy handle that used it is gone
    share_ = nullptr;
    sockets_.Clear();
    timer_.Set(-1);
    stall_guard_.Stop();
  }

  size_t running() const { return running_.size(); }
  size_t queued() const { return queued_.size(); }
  size_t watched() const { return sockets_.size(); }

 private:
  // curl's timer callback: records, never calls back into curl.
  static int OnTimer(CURLM*, long timeout_ms, void* userp) {
    static_cast<Engine*>(userp)->timer_.Set(timeout_ms);
    return 0;
  }

  void SocketAction(curl_socket_t fd, int events) {
    if (multi_ == nullptr) return;
    int still_running = 0;
    const CURLMcode rc = curl_multi_socket_action(multi_, fd, events, &still_running);
    if (rc != CURLM_OK) {
      // The multi handle's state is now uncertain: fail everything and start over.
      FailAllRunning(std::string("curl_multi_socket_action: ") + curl_multi_strerror(rc));
      return;
    }
    DrainCompleted();
    StartQueued();
  }

  // StallGuard's tick: reports every socket curl reads from as readable once; true while
  // transfers run.
  bool KickReadable() {
    if (multi_ == nullptr || running_.empty()) return false;
    for (curl_socket_t fd : sockets_.Readable()) SocketAction(fd, CURL_CSELECT_IN);
    return !running_.empty();
  }

  void DrainCompleted() {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* easy = msg->easy_handle;
      const CURLcode code = msg->data.result;
      auto it = running_.find(easy);
      if (it == running_.end()) continue;
      std::unique_ptr<CurlTransfer> transfer = std::move(it->second);
      running_.erase(it);
      curl_multi_remove_handle(multi_, easy);
      Deliver(std::move(transfer->done), CompletedOutcome(*transfer, code));
      Recycle(*transfer);
    }
  }

  // Keeps finished easy handles for the next transfers (curl_easy_reset keeps their buffers and
  // DNS/connection caches live in the multi), up to easy_handle_pool of them.
  void Recycle(CurlTransfer& transfer) {
    if (transfer.easy == nullptr || idle_easies_.size() >= options_.easy_handle_pool) return;
    curl_easy_reset(transfer.easy);
    idle_easies_.push_back(transfer.easy);
    transfer.easy = nullptr;
  }

  void Deliver(TransportCallback done, TransportOutcome outcome) {
    asio::post(io_, [done = std::move(done), outcome = std::move(outcome)]() mutable {
      done(std::move(outcome));
    });
  }

  void FailLater(CurlTransfer& transfer, std::string message) {
    TransportOutcome outcome;
    outcome.response.url = transfer.request.url;
    outcome.error = TransportError{TransportErrorKind::kShutdown, 0, std::move(message)};
    Deliver(std::move(transfer.done), std::move(outcome));
  }

  void FailAllRunning(const std::string& message) {
    for (auto& [easy, transfer] : running_) {
      curl_multi_remove_handle(multi_, easy);
      TransportOutcome outcome;
      outcome.response.url = transfer->request.url;
      outcome.error = TransportError{TransportErrorKind::kOther, 0, message};
      Deliver(std::move(transfer->done), std::move(outcome));
    }
    running_.clear();
  }

  void StartQueued() {
    while (multi_ != nullptr && !queued_.empty() &&
           running_.size() < options_.max_concurrent_transfers) {
      std::unique_ptr<CurlTransfer> transfer = std::move(queued_.front());
      queued_.pop_front();
      if (!Configure(*transfer)) {
        TransportOutcome outcome;
        outcome.error = TransportError{TransportErrorKind::kOther, 0, "curl_easy_init failed"};
        Deliver(std::move(transfer->done), std::move(outcome));
        continue;
      }
      CURL* easy = transfer->easy;
      running_.emplace(easy, std::move(transfer));
      stall_guard_.Arm();
      if (curl_multi_add_handle(multi_, easy) != CURLM_OK) {
        auto node = running_.extract(easy);
        FailLater(*node.mapped(), "curl_multi_add_handle failed");
      }
    }
  }

  bool Configure(CurlTransfer& t) {
    CURL* easy = nullptr;
    if (!idle_easies_.empty()) {
      easy = idle_easies_.back();
      idle_easies_.pop_back();
    } else {
      easy = curl_easy_init();
    }
    if (easy == nullptr) return false;
    ConfigureEasy(t, easy,
                  {.http2 = options_.http2,
                   .close_socket = &CurlSockets::OnCloseSocket,
                   .close_socket_data = &sockets_,
                   .share = share_,
                   .ca_file = options_.ca_file.empty() ? nullptr : options_.ca_file.c_str()});
    return true;
  }

  asio::io_context& io_;
  CurlTransportOptions options_;
  CURLM* multi_ = nullptr;
  CURLSH* share_ = nullptr;  // TLS sessions and DNS, for every easy handle (this thread only)
  MultiTimer timer_;         // CURLMOPT_TIMERFUNCTION's one timer
  StallGuard stall_guard_;   // see StallGuard
  CurlSockets sockets_;      // the descriptors curl watches, bridged to io_
  std::deque<std::unique_ptr<CurlTransfer>> queued_;
  std::vector<CURL*> idle_easies_;  // reset handles ready for reuse
  std::unordered_map<CURL*, std::unique_ptr<CurlTransfer>> running_;
};

CurlTransport::CurlTransport(boost::asio::io_context& io, CurlTransportOptions options)
    : engine_(std::make_unique<Engine>(io, options)) {}
CurlTransport::~CurlTransport() = default;

void CurlTransport::Start(HttpRequest request, TransportCallback done) {
  engine_->Start(std::move(request), std::move(done));
}
void CurlTransport::Shutdown() { engine_->Shutdown(); }
size_t CurlTransport::running_transfers() const { return engine_->running(); }
size_t CurlTransport::queued_transfers() const { return engine_->queued(); }
size_t CurlTransport::watched_sockets() const { return engine_->watched(); }

}  // namespace hubwatch::hub
