#include "tracker/hub/curl_sockets.h"

#include <poll.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>

namespace hubwatch::hub {

namespace asio = boost::asio;

// One descriptor curl asked us to watch. Owns nothing: the descriptor is released, never
// closed, when the watch goes away.
struct CurlSockets::Watch {
  Watch(asio::io_context& io, curl_socket_t fd) : fd(fd), descriptor(io) {}
  ~Watch() {
    if (descriptor.is_open()) descriptor.release();
  }
  curl_socket_t fd;
  asio::posix::stream_descriptor descriptor;
  int want = 0;  // CURL_POLL_IN / CURL_POLL_OUT bits
  bool waiting_in = false;
  bool waiting_out = false;
};

CurlSockets::CurlSockets(asio::io_context& io, Action action)
    : io_(io), action_(std::move(action)) {}

CurlSockets::~CurlSockets() = default;

void CurlSockets::Attach(CURLM* multi) {
  multi_ = multi;
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlSockets::OnSocket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
}

void CurlSockets::Detach() { multi_ = nullptr; }

std::vector<curl_socket_t> CurlSockets::Readable() const {
  std::vector<curl_socket_t> readable;
  for (const auto& [fd, watch] : watches_) {
    if (watch->want & CURL_POLL_IN) readable.push_back(fd);
  }
  return readable;
}

// --- curl callbacks: record and schedule; never call back into curl ---

int CurlSockets::OnSocket(CURL*, curl_socket_t fd, int what, void* userp, void* socketp) {
  auto* self = static_cast<CurlSockets*>(userp);
  if (what == CURL_POLL_REMOVE) {
    if (socketp != nullptr) self->Forget(fd);
    return 0;
  }
  if (self->multi_ == nullptr) return 0;  // shutting down
  std::shared_ptr<Watch> watch;
  if (auto it = self->watches_.find(fd); socketp != nullptr && it != self->watches_.end()) {
    watch = it->second;
  } else {
    self->Forget(fd);  // a stale watch for a reused descriptor number
    watch = std::make_shared<Watch>(self->io_, fd);
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

int CurlSockets::OnCloseSocket(void* clientp, curl_socket_t fd) {
  static_cast<CurlSockets*>(clientp)->Forget(fd);
  return ::close(fd);
}

// --- the loop side ---

void CurlSockets::Forget(curl_socket_t fd) {
  auto it = watches_.find(fd);
  if (it == watches_.end()) return;
  if (it->second->descriptor.is_open()) it->second->descriptor.release();  // aborts its waits
  watches_.erase(it);
  if (multi_ != nullptr) curl_multi_assign(multi_, fd, nullptr);
}

void CurlSockets::Arm(const std::shared_ptr<Watch>& watch) {
  if ((watch->want & CURL_POLL_IN) && !watch->waiting_in) Wait(watch, CURL_CSELECT_IN);
  if ((watch->want & CURL_POLL_OUT) && !watch->waiting_out) Wait(watch, CURL_CSELECT_OUT);
}

void CurlSockets::Wait(const std::shared_ptr<Watch>& watch, int direction) {
  const bool in = direction == CURL_CSELECT_IN;
  (in ? watch->waiting_in : watch->waiting_out) = true;
  std::weak_ptr<Watch> weak = watch;
  std::weak_ptr<bool> alive = alive_;
  auto handler = [this, weak, alive, direction](boost::system::error_code ec) {
    if (alive.expired()) return;
    OnReady(weak, direction, ec == asio::error::operation_aborted, static_cast<bool>(ec));
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

void CurlSockets::OnReady(const std::weak_ptr<Watch>& weak, int direction, bool aborted,
                          bool failed) {
  std::shared_ptr<Watch> watch = weak.lock();
  if (!watch) return;
  (direction == CURL_CSELECT_IN ? watch->waiting_in : watch->waiting_out) = false;
  if (aborted || multi_ == nullptr) return;
  action_(watch->fd, direction | (failed ? CURL_CSELECT_ERR : 0));
  // The action may have removed this watch or replaced it with a new one.
  auto it = watches_.find(watch->fd);
  if (it != watches_.end() && it->second == watch) Arm(watch);
}

}  // namespace hubwatch::hub
