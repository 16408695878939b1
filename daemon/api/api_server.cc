// The network side of the API: the listener, one Session per connection (HTTP/1.1 with
// keep-alive, timeouts and limits) and its Server-Sent Events mode. The only Boost.Beast
// translation unit of daemon/api; the router and the handlers never see Beast.

#include "daemon/api/api_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <ctime>
#include <unordered_map>

#include "daemon/api/api_context.h"
#include "daemon/api/session_metrics.h"
#include "daemon/api/sse.h"
#include "daemon/service/store_access.h"
#include "tracker/store/store.h"

namespace hubwatch::api {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr uint32_t kHeaderLimit = 16 * 1024;
constexpr int64_t kStreamBatch = 100;     // advisories per SSE write
constexpr uint64_t kMaxDrain = 8u << 20;  // bytes read and dropped after an early error

// "127.0.0.1:8437", "[::1]:8437", "localhost:0".
Result<tcp::endpoint> ParseListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return Error::InvalidInput("listen must be HOST:PORT");
  std::string host = listen.substr(0, colon);
  const std::string port = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost") host = "127.0.0.1";
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535) {
    return Error::InvalidInput("listen " + listen + ": bad port");
  }
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec) return Error::InvalidInput("listen " + listen + ": not an IP address");
  return tcp::endpoint(address, static_cast<uint16_t>(p));
}

}  // namespace

class ApiServer::Impl : public std::enable_shared_from_this<Impl> {
 public:
  class Session;

  Impl(const cli::ApiConfig& config, ApiDeps deps)
      : io_(*deps.io), acceptor_(io_), metrics_(*deps.metrics) {
    ctx_.config = config;
    ctx_.store = deps.store;
    ctx_.metrics = deps.metrics;
    ctx_.control = deps.control;
    ctx_.subscriptions = deps.subscriptions;
    ctx_.admin_token = std::move(deps.admin_token);
    ctx_.hub_url = std::move(deps.hub_url);
    ctx_.now =
        deps.now ? std::move(deps.now) : [] { return static_cast<int64_t>(std::time(nullptr)); };
    ctx_.tuning = deps.tuning;
    ctx_.alive = alive_;
    router_ = BuildRouter(ctx_);
  }

  Status Listen() {
    Result<tcp::endpoint> endpoint = ParseListen(ctx_.config.listen);
    if (!endpoint.ok()) return endpoint.error();
    beast::error_code ec;
    acceptor_.open(endpoint->protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(*endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return Error::Io("api: listening on " + ctx_.config.listen + ": " + ec.message());
    port_ = acceptor_.local_endpoint().port();
    Accept();
    return Status::Ok();
  }

  void Stop();
  void OnNewAdvisories();
  uint16_t port() const { return port_; }

  const ApiContext& ctx() const { return ctx_; }
  const Router& router() const { return router_; }
  SessionMetrics& metrics() { return metrics_; }
  bool stopped() const { return !*alive_; }
  // Metrics only while running: sessions may outlive Stop() and the registry.
  void Forget(Session* s) {
    sessions_.erase(s);
    if (!stopped()) metrics_.Connections(sessions_.size());
  }
  void AddStream(const std::shared_ptr<Session>& s) { streams_.push_back(s); }

 private:
  void Accept();
  void Reject(tcp::socket socket);

  asio::io_context& io_;
  tcp::acceptor acceptor_;
  ApiContext ctx_;
  Router router_;
  SessionMetrics metrics_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  uint16_t port_ = 0;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions_;
  std::vector<std::weak_ptr<Session>> streams_;
};

// One connection. Reads a request (header, then the body under the route's limit), dispatches
// it, writes the reply, and repeats while keep-alive holds. In stream mode it writes events
// until the client goes away; a raw read on the socket notices that.
class ApiServer::Impl::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<Impl> server)
      : stream_(std::move(socket)), server_(std::move(server)), timer_(stream_.get_executor()) {}
  ~Session() { server_->Forget(this); }

  void Start() { ReadHeader(); }
  bool is_open() const { return stream_.socket().is_open(); }

  void Close() {
    beast::error_code ignored;
    timer_.cancel();
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  // Stream mode: sends the advisories after the last one sent (one batch per write).
  void Pump() {
    if (!streaming_ || server_->stopped()) return;
    if (writing_) {
      pump_again_ = true;
      return;
    }
    store::Query q{.repo = stream_start_.repo,
                   .kind = stream_start_.kind,
                   .since = stream_start_.after_seq,
                   .limit = kStreamBatch};
    Result<std::vector<store::AdvisoryRecord>> batch = server_->ctx().reads().ListAdvisories(q);
    if (!batch.ok()) return Close();
    if (batch->empty()) return;
    std::string out;
    for (const store::AdvisoryRecord& a : *batch) out += SseEvent(a);
    stream_start_.after_seq = batch->back().seq;
    server_->metrics().StreamEvents(batch->size());
    pump_again_ = static_cast<int64_t>(batch->size()) == kStreamBatch;
    WriteStream(std::move(out));
  }

 private:
  std::chrono::seconds HeaderTimeout() const {
    return std::chrono::seconds(std::max<int64_t>(1, server_->ctx().config.header_timeout_s));
  }
  std::chrono::seconds ReadTimeout() const {
    return std::chrono::seconds(std::max<int64_t>(1, server_->ctx().config.read_timeout_s));
  }

  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(boost::none);  // checked per route once the header is in
    stream_.expires_after(HeaderTimeout());
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    if (server_->stopped()) return Close();
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::eof ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset) {
      return Close();
    }
    started_ = std::chrono::steady_clock::now();
    if (ec == http::error::header_limit) return Fail(431, "request header fields too large");
    if (ec) return Fail(400, "malformed HTTP request: " + ec.message());
    const auto& header = parser_->get();
    const std::string target(header.target());
    if (target.empty() || target[0] != '/') return Fail(400, "the request target must be a path");
    const std::string path = target.substr(0, target.find('?'));
    const Router::Match match = server_->router().Find(header.method_string(), path);
    const uint64_t limit = match.route && match.route->max_body_bytes
                               ? *match.route->max_body_bytes
                               : server_->ctx().config.max_body_bytes;
    body_limit_ = limit;
    if (parser_->content_length() && *parser_->content_length() > limit) {
      return Fail(413, "the request body is larger than " + std::to_string(limit) + " bytes");
    }
    parser_->body_limit(limit);
    // The body gets read_timeout_s, on our own timer, so that running out of time leaves the
    // socket open for a 408 (the stream's own timeout closes it).
    stream_.expires_never();
    auto read_body = [self = shared_from_this()] {
      self->body_timed_out_ = false;
      self->timer_.expires_after(self->ReadTimeout());
      self->timer_.async_wait([weak = std::weak_ptr<Session>(self)](beast::error_code ec) {
        auto s = weak.lock();
        if (ec || !s) return;
        s->body_timed_out_ = true;
        beast::error_code ignored;
        s->stream_.socket().cancel(ignored);
      });
      http::async_read(self->stream_, self->buffer_, *self->parser_,
                       [self](beast::error_code ec, size_t) { self->OnBody(ec); });
    };
    const auto expect = header.find(http::field::expect);
    if (expect != header.end() && beast::iequals(expect->value(), "100-continue") &&
        !parser_->is_done()) {
      auto interim = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
      asio::async_write(
          stream_, asio::buffer(*interim),
          [self = shared_from_this(), interim, read_body](beast::error_code ec, size_t) {
            if (ec) return self->Close();
            read_body();
          });
      return;
    }
    read_body();
  }

  void OnBody(beast::error_code ec) {
    timer_.cancel();
    if (server_->stopped()) return Close();
    if (body_timed_out_) return Fail(408, "the request body took too long");
    if (ec == http::error::body_limit) {
      return Fail(413, "the request body is larger than " + std::to_string(body_limit_) + " bytes");
    }
    if (ec) return Close();
    http::request<http::string_body> message = parser_->release();
    HttpRequest request;
    request.method = std::string(message.method_string());
    const std::string target(message.target());
    const size_t q = target.find('?');
    request.path = target.substr(0, q);
    request.query = q == std::string::npos ? "" : target.substr(q + 1);
    for (const auto& field : message) {
      std::string name(field.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      request.headers.emplace_back(std::move(name), std::string(field.value()));
    }
    request.body = std::move(message.body());
    keep_alive_ = message.keep_alive();
    method_ = request.method;
    replied_ = false;
    // The reply callback owns the session: a handler that answers later (after a store write on
    // the store thread) finds it alive; once the server stops, Send drops the reply.
    server_->router().Dispatch(
        request, [self = shared_from_this()](HttpReply reply) { self->Send(std::move(reply)); },
        &route_);
  }

  // An error before dispatch: reply and close (the rest of the request is not read).
  void Fail(int status, const std::string& message) {
    keep_alive_ = false;
    drain_ = true;
    route_ = "invalid";
    method_ = parser_ ? std::string(parser_->get().method_string()) : "";
    replied_ = false;
    Send(HttpReply::Error(status, message));
  }

  void Send(HttpReply reply) {
    if (replied_ || server_->stopped()) return;
    replied_ = true;
    server_->metrics().Request(route_, method_, reply.status,
                               std::chrono::steady_clock::now() - started_);
    if (reply.event_stream) return StartStream(std::move(reply));
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(reply.status), 11);
    res->set(http::field::server, "hubwatch");
    for (const auto& [name, value] : reply.headers) res->set(name, value);
    if (reply.status != 204 && reply.status != 304) {
      res->set(http::field::content_type, reply.content_type);
      res->body() = std::move(reply.body);
    }
    res->keep_alive(keep_alive_);
    res->prepare_payload();
    stream_.expires_after(ReadTimeout());
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res](beast::error_code ec, size_t) {
                        if (!ec && self->drain_ && !self->server_->stopped()) {
                          return self->DrainAndClose();
                        }
                        if (ec || !res->keep_alive() || self->server_->stopped()) {
                          return self->Close();
                        }
                        self->ReadHeader();
                      });
  }

  // After an early error reply: stop sending, read (and drop) what the client still sends for
  // a moment, then close. Closing with unread data would reset the connection and the client
  // might never see the reply.
  void DrainAndClose() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::seconds(2));
    stream_.async_read_some(asio::buffer(sink_),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ > kMaxDrain) return self->Close();
                              self->DrainAndClose();
                            });
  }

  void StartStream(HttpReply reply) {
    streaming_ = true;
    stream_start_ = *reply.event_stream;
    std::string head =
        "HTTP/1.1 200 OK\r\nServer: hubwatch\r\nContent-Type: " + reply.content_type + "\r\n";
    for (const auto& [name, value] : reply.headers) head += name + ": " + value + "\r\n";
    head += "X-Accel-Buffering: no\r\nConnection: close\r\n\r\n" + reply.body;
    server_->AddStream(shared_from_this());
    server_->metrics().Streams(+1);
    WatchForClose();
    ScheduleHeartbeat();
    WriteStream(std::move(head));
    pump_again_ = true;  // replay what came after Last-Event-ID once the head is out
  }

  void WriteStream(std::string data) {
    writing_ = true;
    auto out = std::make_shared<std::string>(std::move(data));
    stream_.expires_after(ReadTimeout());  // a client that stops reading is dropped
    asio::async_write(stream_, asio::buffer(*out),
                      [self = shared_from_this(), out](beast::error_code ec, size_t) {
                        self->writing_ = false;
                        if (ec || self->server_->stopped()) return self->Close();
                        if (self->pump_again_) {
                          self->pump_again_ = false;
                          self->Pump();
                        }
                      });
  }

  // Nothing is read from a stream client; a read completing (EOF, reset) means it left.
  void WatchForClose() {
    stream_.socket().async_read_some(asio::buffer(sink_),
                                     [self = shared_from_this()](beast::error_code ec, size_t) {
                                       if (ec) {
                                         self->server_->metrics().Streams(-1);
                                         return self->Close();
                                       }
                                       self->WatchForClose();
                                     });
  }

  void ScheduleHeartbeat() {
    timer_.expires_after(server_->ctx().tuning.sse_heartbeat);
    timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->server_->stopped() || !self->stream_.socket().is_open()) return;
      if (!self->writing_) self->WriteStream(SseHeartbeat());
      self->ScheduleHeartbeat();
    });
  }

  beast::tcp_stream stream_;
  std::shared_ptr<Impl> server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::string route_ = "invalid";
  std::string method_;
  uint64_t body_limit_ = 0;
  bool keep_alive_ = false;
  bool replied_ = false;
  bool drain_ = false;
  bool body_timed_out_ = false;  // an unread request body may follow: drain before closing
  // Stream mode.
  bool streaming_ = false;
  bool writing_ = false;
  bool pump_again_ = false;
  EventStreamStart stream_start_;
  asio::steady_timer timer_;  // the body deadline; in stream mode, heartbeats
  char sink_[16 * 1024];
  uint64_t drained_ = 0;
};

void ApiServer::Impl::Accept() {
  acceptor_.async_accept([self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
    if (self->stopped() || !self->acceptor_.is_open()) return;
    if (!ec) {
      if (static_cast<int>(self->sessions_.size()) >= self->ctx_.config.max_connections) {
        self->Reject(std::move(socket));
      } else {
        auto session = std::make_shared<Session>(std::move(socket), self);
        self->sessions_.emplace(session.get(), session);
        self->metrics_.Connections(self->sessions_.size());
        session->Start();
      }
    }
    self->Accept();
  });
}

// Over the connection cap: one 503 and close, without reading the request.
void ApiServer::Impl::Reject(tcp::socket socket) {
  metrics_.Rejected();
  const std::string body = R"({"error":"too many connections; try again later"})";
  auto out = std::make_shared<std::string>(
      "HTTP/1.1 503 Service Unavailable\r\nServer: hubwatch\r\nContent-Type: application/json\r\n"
      "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body);
  auto sock = std::make_shared<tcp::socket>(std::move(socket));
  asio::async_write(*sock, asio::buffer(*out), [sock, out](beast::error_code, size_t) {
    beast::error_code ignored;
    sock->shutdown(tcp::socket::shutdown_both, ignored);
    sock->close(ignored);
  });
}

void ApiServer::Impl::Stop() {
  if (stopped()) return;
  *alive_ = false;
  beast::error_code ignored;
  acceptor_.close(ignored);
  // Closing cancels every pending operation; the sessions go when their handlers run.
  std::vector<std::shared_ptr<Session>> live;
  for (auto& [raw, weak] : sessions_) {
    if (auto s = weak.lock()) live.push_back(std::move(s));
  }
  for (auto& s : live) s->Close();
  streams_.clear();
  metrics_.Connections(0);
  metrics_.StreamsClosed();
}

void ApiServer::Impl::OnNewAdvisories() {
  std::vector<std::weak_ptr<Session>> kept;
  for (auto& weak : streams_) {
    if (auto s = weak.lock(); s && s->is_open()) {
      s->Pump();
      kept.push_back(std::move(weak));
    }
  }
  streams_ = std::move(kept);
}

Result<std::unique_ptr<ApiServer>> ApiServer::Start(const cli::ApiConfig& config, ApiDeps deps) {
  if (!deps.io || !deps.store || !deps.metrics) {
    return Error::InvalidInput("api: io, store and metrics are required");
  }
  auto impl = std::make_shared<Impl>(config, std::move(deps));
  if (Status s = impl->Listen(); !s.ok()) return s.error();
  return std::unique_ptr<ApiServer>(new ApiServer(std::move(impl)));
}

ApiServer::ApiServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
ApiServer::~ApiServer() { Stop(); }
uint16_t ApiServer::port() const { return impl_->port(); }
void ApiServer::Stop() { impl_->Stop(); }
void ApiServer::OnNewAdvisories() { impl_->OnNewAdvisories(); }

}  // namespace hubwatch::api
