#pragma once

// SseStream: one Server-Sent Events connection of GET /api/v1/stream. The HTTP session that
// answered the request hands its socket over (as Beast hands a socket to a websocket session)
// and is done; the stream writes the head, replays what came after the client's last event id,
// then one batch of advisories and follow events per write whenever the core wakes it
// (OnNewAdvisories), with a heartbeat comment when idle. Nothing is read from the client: a read completing (EOF, reset)
// means it left. A client that stops reading is dropped after read_timeout_s of a stalled
// write, so a stream holds at most one batch (kStreamBatch events of each) in memory.
//
// Thread safety: network thread only. Ownership: shared (its handlers hold it); it holds a
// stream slot of the core from Start() until it is destroyed.

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <memory>
#include <string>

#include "daemon/api/http_message.h"
#include "daemon/api/server_core.h"

namespace hubwatch::api {

class SseStream : public Connection, public std::enable_shared_from_this<SseStream> {
 public:
  // `head`: the HTTP response head and the first bytes of the stream, written first.
  SseStream(boost::beast::tcp_stream stream, EventStreamStart start, std::string head,
            std::shared_ptr<ServerCore> core);
  ~SseStream() override;

  void Start();
  void Close() override;
  bool is_open() const { return stream_.socket().is_open(); }
  // Sends the advisories after the last one sent (one batch per write).
  void Pump();

 private:
  void Write(std::string data);
  void WatchForClose();
  void ScheduleHeartbeat();

  boost::beast::tcp_stream stream_;
  EventStreamStart start_;
  std::string head_;
  std::shared_ptr<ServerCore> core_;
  boost::asio::steady_timer heartbeat_;
  bool writing_ = false;
  bool pump_again_ = false;
  char sink_[1024];
};

}  // namespace hubwatch::api
