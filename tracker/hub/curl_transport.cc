#include "tracker/hub/curl_transport.h"

#include <curl/curl.h>
#include <poll.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "estimator/base/clock.h"

namespace hubwatch::hub {
namespace {

namespace asio = boost::asio;

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// One descriptor curl asked us to watch. Owns nothing: the descriptor is released, never
// closed, when the watch goes away.
struct SocketWatch {
  SocketWatch(asio::io_context& io, curl_socket_t fd) : fd(fd), descriptor(io) {}
  ~SocketWatch() {
    if (descriptor.is_open()) descriptor.release();
  }
  curl_socket_t fd;
  asio::posix::stream_descriptor descriptor;
  int want = 0;  // CURL_POLL_IN / CURL_POLL_OUT bits
  bool waiting_in = false;
  bool waiting_out = false;
};

TransportErrorKind KindOf(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return TransportErrorKind::kTimeout;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return TransportErrorKind::kConnect;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
      return TransportErrorKind::kConnectionReset;
    case CURLE_PARTIAL_FILE:
      return TransportErrorKind::kTruncated;
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_BAD_CONTENT_ENCODING:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      return TransportErrorKind::kProtocol;
    default:
      return TransportErrorKind::kOther;
  }
}

}  // namespace

class CurlTransport::Engine {
 public:
  Engine(asio::io_context& io, CurlTransportOptions options)
      : io_(io), options_(options), timer_(io) {
    GlobalInitOnce();
    multi_ = curl_multi_init();
    curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &Engine::OnSocket);
    curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &Engine::OnTimer);
    curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
    curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, options_.max_host_connections);
    curl_multi_setopt(multi_, CURLMOPT_MAX_TOTAL_CONNECTIONS, options_.max_total_connections);
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, options_.connection_cache_size);
    curl_multi_setopt(multi_, CURLMOPT_PIPELINING,
                      options_.http2 ? CURLPIPE_MULTIPLEX : CURLPIPE_NOTHING);
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
    auto transfer = std::make_unique<Transfer>();
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
    curl_multi_cleanup(multi);
    for (CURL* easy : idle_easies_) curl_easy_cleanup(easy);
    idle_easies_.clear();
    watches_.clear();
    ++timer_generation_;
    timer_armed_ = false;
    timer_.cancel();
  }

  size_t running() const { return running_.size(); }
  size_t queued() const { return queued_.size(); }
  size_t watched() const { return watches_.size(); }

 private:
  struct Transfer {
    ~Transfer() {
      if (easy != nullptr) curl_easy_cleanup(easy);
      if (header_list != nullptr) curl_slist_free_all(header_list);
    }
    CURL* easy = nullptr;
    curl_slist* header_list = nullptr;
    HttpRequest request;
    HttpResponse response;
    TransportCallback done;
    char error_buffer[CURL_ERROR_SIZE] = {};
  };

  // --- curl callbacks: record and schedule; never call back into curl ---

  static int OnSocket(CURL*, curl_socket_t fd, int what, void* userp, void* socketp) {
    auto* self = static_cast<Engine*>(userp);
    if (what == CURL_POLL_REMOVE) {
      if (socketp != nullptr) self->Forget(fd);
      return 0;
    }
    if (self->multi_ == nullptr) return 0;  // shutting down
    std::shared_ptr<SocketWatch> watch;
    if (auto it = self->watches_.find(fd); socketp != nullptr && it != self->watches_.end()) {
      watch = it->second;
    } else {
      self->Forget(fd);  // a stale watch for a reused descriptor number
      watch = std::make_shared<SocketWatch>(self->io_, fd);
      boost::system::error_code ec;
      watch->descriptor.assign(fd, ec);
      if (ec) return -1;
      self->watches_[fd] = watch;
      curl_multi_assign(self->multi_, fd, watch.get());
    }
    watch->want = what;
    self->Arm(watch);
    return 0;
  }

  static int OnTimer(CURLM*, long timeout_ms, void* userp) {
    auto* self = static_cast<Engine*>(userp);
    if (timeout_ms < 0) {
      ++self->timer_generation_;
      self->timer_armed_ = false;
      self->timer_.cancel();
      return 0;
    }
    if (timeout_ms == 0) {
      // "As soon as possible" (every curl_multi_add_handle asks for it): a posted handler, not
      // the timer. Arming an Asio timer that becomes the earliest reprograms the reactor's
      // timerfd, a syscall that cost 14% of an unchanged poll cycle. The armed timer, if any,
      // stays: waking then is harmless.
      if (self->immediate_posted_) return 0;
      self->immediate_posted_ = true;
      std::weak_ptr<bool> alive = self->alive_;
      asio::post(self->io_, [self, alive] {
        if (alive.expired()) return;
        self->immediate_posted_ = false;
        self->SocketAction(CURL_SOCKET_TIMEOUT, 0);
      });
      return 0;
    }
    const SteadyTime deadline = SystemClock().Now() + std::chrono::milliseconds(timeout_ms);
    // A pending wake-up that comes no later is kept: waking early is harmless (curl re-arms with
    // what remains), and it saves re-programming the timer on every call.
    if (self->timer_armed_ && self->timer_deadline_ <= deadline) return 0;
    const uint64_t generation = ++self->timer_generation_;
    self->timer_armed_ = true;
    self->timer_deadline_ = deadline;
    self->timer_.expires_at(deadline);
    std::weak_ptr<bool> alive = self->alive_;
    self->timer_.async_wait([self, alive, generation](boost::system::error_code ec) {
      if (ec || alive.expired() || generation != self->timer_generation_) return;
      self->timer_armed_ = false;
      self->SocketAction(CURL_SOCKET_TIMEOUT, 0);
    });
    return 0;
  }

  // Multi-wide (CLOSESOCKETDATA is the engine, never a transfer): curl may close a connection
  // long after the easy handle that opened it is gone.
  static int OnCloseSocket(void* clientp, curl_socket_t fd) {
    static_cast<Engine*>(clientp)->Forget(fd);
    return ::close(fd);
  }

  static size_t OnWrite(char* data, size_t size, size_t count, void* userp) {
    auto* transfer = static_cast<Transfer*>(userp);
    const size_t n = size * count;
    HttpResponse& r = transfer->response;
    if (r.body.size() + n > transfer->request.max_body_bytes) {
      r.body.append(data, transfer->request.max_body_bytes - r.body.size());
      r.body_limit_hit = true;
      return CURL_WRITEFUNC_ERROR;
    }
    r.body.append(data, n);
    return n;
  }

  static size_t OnHeader(char* data, size_t size, size_t count, void* userp) {
    auto* transfer = static_cast<Transfer*>(userp);
    const size_t n = size * count;
    std::string_view line(data, n);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.starts_with("HTTP/")) {
      transfer->response.headers = HttpHeaders();  // a new response (after 1xx)
      return n;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return n;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    transfer->response.headers.Add(std::string(line.substr(0, colon)), std::string(value));
    return n;
  }

  // --- the loop side ---

  void Forget(curl_socket_t fd) {
    auto it = watches_.find(fd);
    if (it == watches_.end()) return;
    if (it->second->descriptor.is_open()) it->second->descriptor.release();  // aborts its waits
    watches_.erase(it);
    if (multi_ != nullptr) curl_multi_assign(multi_, fd, nullptr);
  }

  void Arm(const std::shared_ptr<SocketWatch>& watch) {
    if ((watch->want & CURL_POLL_IN) && !watch->waiting_in) Wait(watch, CURL_CSELECT_IN);
    if ((watch->want & CURL_POLL_OUT) && !watch->waiting_out) Wait(watch, CURL_CSELECT_OUT);
  }

  void Wait(const std::shared_ptr<SocketWatch>& watch, int direction) {
    const bool in = direction == CURL_CSELECT_IN;
    (in ? watch->waiting_in : watch->waiting_out) = true;
    std::weak_ptr<SocketWatch> weak = watch;
    std::weak_ptr<bool> alive = alive_;
    auto handler = [this, weak, alive, direction](boost::system::error_code ec) {
      if (alive.expired()) return;
      OnReady(weak, direction, ec);
    };
    // Asio's reactor is edge-triggered: a descriptor curl left ready raises no new edge, so a
    // direction that is ready now runs on the next loop turn instead of waiting.
    pollfd p{watch->fd, static_cast<short>(in ? POLLIN : POLLOUT), 0};
    if (::poll(&p, 1, 0) > 0) {
      asio::post(io_, [handler] { handler({}); });
      return;
    }
    watch->descriptor.async_wait(
        in ? asio::posix::stream_descriptor::wait_read : asio::posix::stream_descriptor::wait_write,
        std::move(handler));
  }

  void OnReady(const std::weak_ptr<SocketWatch>& weak, int direction,
               boost::system::error_code ec) {
    std::shared_ptr<SocketWatch> watch = weak.lock();
    if (!watch) return;
    (direction == CURL_CSELECT_IN ? watch->waiting_in : watch->waiting_out) = false;
    if (ec == asio::error::operation_aborted || multi_ == nullptr) return;
    SocketAction(watch->fd, direction | (ec ? CURL_CSELECT_ERR : 0));
    // socket_action may have removed this watch or replaced it with a new one.
    auto it = watches_.find(watch->fd);
    if (it != watches_.end() && it->second == watch) Arm(watch);
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

  void DrainCompleted() {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* easy = msg->easy_handle;
      const CURLcode code = msg->data.result;
      auto it = running_.find(easy);
      if (it == running_.end()) continue;
      std::unique_ptr<Transfer> transfer = std::move(it->second);
      running_.erase(it);
      curl_multi_remove_handle(multi_, easy);
      Complete(*transfer, code);
      Recycle(*transfer);
    }
  }

  // Keeps finished easy handles for the next transfers (curl_easy_reset keeps their buffers and
  // DNS/connection caches live in the multi), up to easy_handle_pool of them.
  void Recycle(Transfer& transfer) {
    if (transfer.easy == nullptr || idle_easies_.size() >= options_.easy_handle_pool) return;
    curl_easy_reset(transfer.easy);
    idle_easies_.push_back(transfer.easy);
    transfer.easy = nullptr;
  }

  void Complete(Transfer& transfer, CURLcode code) {
    HttpResponse& r = transfer.response;
    long status = 0, request_size = 0, header_size = 0, version = 0, connects = 0;
    curl_off_t downloaded = 0, uploaded = 0;
    curl_easy_getinfo(transfer.easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(transfer.easy, CURLINFO_REQUEST_SIZE, &request_size);
    curl_easy_getinfo(transfer.easy, CURLINFO_HEADER_SIZE, &header_size);
    curl_easy_getinfo(transfer.easy, CURLINFO_SIZE_DOWNLOAD_T, &downloaded);
    curl_easy_getinfo(transfer.easy, CURLINFO_SIZE_UPLOAD_T, &uploaded);
    curl_easy_getinfo(transfer.easy, CURLINFO_HTTP_VERSION, &version);
    curl_easy_getinfo(transfer.easy, CURLINFO_NUM_CONNECTS, &connects);
    r.status = static_cast<int>(status);
    r.url = transfer.request.url;
    r.bytes_sent = static_cast<uint64_t>(request_size) + static_cast<uint64_t>(uploaded);
    r.bytes_received = static_cast<uint64_t>(header_size) + static_cast<uint64_t>(downloaded);
    r.reused_connection = connects == 0;
    r.http_version = version == CURL_HTTP_VERSION_2_0   ? "2"
                     : version == CURL_HTTP_VERSION_1_0 ? "1.0"
                                                        : "1.1";
    TransportOutcome outcome;
    const bool cut_by_limit = code == CURLE_WRITE_ERROR && r.body_limit_hit;
    if (code != CURLE_OK && !cut_by_limit) {
      std::string message =
          transfer.error_buffer[0] != '\0' ? transfer.error_buffer : curl_easy_strerror(code);
      outcome.error = TransportError{KindOf(code), static_cast<int>(code), std::move(message)};
    }
    outcome.response = std::move(r);
    Deliver(std::move(transfer.done), std::move(outcome));
  }

  void Deliver(TransportCallback done, TransportOutcome outcome) {
    asio::post(io_, [done = std::move(done), outcome = std::move(outcome)]() mutable {
      done(std::move(outcome));
    });
  }

  void FailLater(Transfer& transfer, std::string message) {
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
      std::unique_ptr<Transfer> transfer = std::move(queued_.front());
      queued_.pop_front();
      if (!Configure(*transfer)) {
        TransportOutcome outcome;
        outcome.error = TransportError{TransportErrorKind::kOther, 0, "curl_easy_init failed"};
        Deliver(std::move(transfer->done), std::move(outcome));
        continue;
      }
      CURL* easy = transfer->easy;
      running_.emplace(easy, std::move(transfer));
      if (curl_multi_add_handle(multi_, easy) != CURLM_OK) {
        auto node = running_.extract(easy);
        FailLater(*node.mapped(), "curl_multi_add_handle failed");
      }
    }
  }

  bool Configure(Transfer& t) {
    if (!idle_easies_.empty()) {
      t.easy = idle_easies_.back();
      idle_easies_.pop_back();
    } else {
      t.easy = curl_easy_init();
    }
    if (t.easy == nullptr) return false;
    CURL* e = t.easy;
    const HttpRequest& req = t.request;
    curl_easy_setopt(e, CURLOPT_URL, req.url.c_str());
    curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(req.connect_timeout.count()));
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.error_buffer);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Engine::OnWrite);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Engine::OnHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, &Engine::OnCloseSocket);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, this);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                     options_.http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
    // Waiting for a connection that may multiplex only pays off where h2 can be negotiated;
    // on cleartext HTTP/1.1 it would serialize simultaneous transfers onto one connection.
    const bool tls = req.url.starts_with("https://");
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, options_.http2 && tls ? 1L : 0L);
    if (req.method == HttpMethod::kHead) curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    if (req.accept_compressed) curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    bool has_accept_encoding = req.headers.Has("Accept-Encoding");
    for (const auto& [name, value] : req.headers.entries()) {
      const std::string line = name + ": " + value;
      t.header_list = curl_slist_append(t.header_list, line.c_str());
    }
    if (!req.accept_compressed && !has_accept_encoding) {
      t.header_list = curl_slist_append(t.header_list, "Accept-Encoding: identity");
    }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.header_list);
    return true;
  }

  asio::io_context& io_;
  CurlTransportOptions options_;
  CURLM* multi_ = nullptr;
  asio::steady_timer timer_;
  uint64_t timer_generation_ = 0;
  bool timer_armed_ = false;
  bool immediate_posted_ = false;  // a zero timeout's SocketAction is posted, not yet run
  std::chrono::steady_clock::time_point timer_deadline_;
  std::unordered_map<curl_socket_t, std::shared_ptr<SocketWatch>> watches_;
  std::deque<std::unique_ptr<Transfer>> queued_;
  std::vector<CURL*> idle_easies_;  // reset handles ready for reuse
  std::unordered_map<CURL*, std::unique_ptr<Transfer>> running_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // handlers hold weak_ptrs
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
