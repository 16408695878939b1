#pragma once

// CurlSockets: the descriptors a curl multi handle asks to watch (CURLMOPT_SOCKETFUNCTION),
// bridged to readiness waits on a Boost.Asio io_context; the socket half of CurlTransport
// (curl_transport.h), which keeps the transfers, the multi handle and its timer.
//  - every descriptor curl reports gets a watch, attached with curl_multi_assign and destroyed on
//    CURL_POLL_REMOVE or when curl closes the descriptor (OnCloseSocket);
//  - descriptors are never owned by Asio: released (never closed) before a watch dies;
//  - readiness waits are re-armed for as long as curl wants that direction, and, because Asio's
//    epoll reactor is edge-triggered, a direction that is still ready is reported on the next
//    loop turn rather than waited for;
//  - readiness is reported as `action(fd, CURL_CSELECT_* bits)`, from the loop, never from
//    inside a curl callback; the action runs curl_multi_socket_action.
//
// Thread safety: the thread that runs `io` only. REQUIRES: io outlives the sockets; a multi
// handle given to Attach stays valid until Detach.

#include <curl/curl.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace hubwatch::hub {

class CurlSockets {
 public:
  using Action = std::function<void(curl_socket_t fd, int events)>;

  CurlSockets(boost::asio::io_context& io, Action action);
  ~CurlSockets();
  CurlSockets(const CurlSockets&) = delete;
  CurlSockets& operator=(const CurlSockets&) = delete;

  // Points `multi`'s socket callback at this object; watches are assigned to `multi`.
  void Attach(CURLM* multi);
  // Stops calling into the multi handle and reporting readiness: before curl_multi_cleanup,
  // whose socket and close callbacks still come.
  void Detach();
  // Drops every watch (after curl_multi_cleanup).
  void Clear() { watches_.clear(); }

  // The close-socket callback of every easy handle, with this object as its data (multi-wide:
  // curl may close a connection long after the easy handle that opened it is gone).
  static int OnCloseSocket(void* clientp, curl_socket_t fd);

  // Every descriptor curl currently wants to read from.
  std::vector<curl_socket_t> Readable() const;
  size_t size() const { return watches_.size(); }

 private:
  struct Watch;

  static int OnSocket(CURL*, curl_socket_t fd, int what, void* userp, void* socketp);
  void Forget(curl_socket_t fd);
  void Arm(const std::shared_ptr<Watch>& watch);
  void Wait(const std::shared_ptr<Watch>& watch, int direction);
  // `aborted`: the wait was cancelled (its watch released); `failed`: it ended in an error.
  void OnReady(const std::weak_ptr<Watch>& weak, int direction, bool aborted, bool failed);

  boost::asio::io_context& io_;
  Action action_;
  CURLM* multi_ = nullptr;
  std::unordered_map<curl_socket_t, std::shared_ptr<Watch>> watches_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // handlers hold weak_ptrs
};

}  // namespace hubwatch::hub
