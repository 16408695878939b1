#include "daemon/api/http_session.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>

#include "daemon/api/sse_stream.h"

namespace hubwatch::api {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr uint32_t kHeaderLimit = 16 * 1024;
constexpr uint64_t kMaxDrain = 8u << 20;  // bytes read and dropped after an early error
constexpr std::chrono::seconds kProbeHeaderTimeout{2};

bool IsProbe(std::string_view method, std::string_view path) {
  return (method == "GET" || method == "HEAD") && (path == "/healthz" || path == "/readyz");
}

// A parse error of the request itself (a bad chunk size, a bad header), not the peer leaving.
bool IsMalformed(const beast::error_code& ec) {
  return ec.category() == make_error_code(http::error::bad_chunk).category() &&
         ec != http::error::end_of_stream && ec != http::error::partial_message;
}

HttpReply TryAgainLater(int retry_after_s, std::string_view message) {
  HttpReply reply = HttpReply::Error(503, message);
  reply.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
  return reply;
}

class HttpSession : public Connection, public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, std::shared_ptr<ServerCore> core, Slot slot)
      : stream_(std::move(socket)),
        core_(std::move(core)),
        slot_(slot),
        timer_(stream_.get_executor()) {}
  ~HttpSession() override { core_->Unregister(this); }

  void Start() {
    core_->Register(this, weak_from_this(), slot_);
    ReadHeader();
  }

  void Close() override {
    beast::error_code ignored;
    timer_.cancel();
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

 private:
  const config::ApiConfig& config() const { return core_->ctx().config; }
  std::chrono::seconds HeaderTimeout() const {
    const std::chrono::seconds t(std::max<int64_t>(1, config().header_timeout_s));
    return slot_ == Slot::kProbe ? std::min(t, kProbeHeaderTimeout) : t;
  }
  std::chrono::seconds ReadTimeout() const {
    return std::chrono::seconds(std::max<int64_t>(1, config().read_timeout_s));
  }
  // In a probe slot: while the session waits on its client, the slot may go to a new
  // connection (server_core.h), which closes this one.
  void Waiting(bool waiting) {
    if (slot_ == Slot::kProbe) core_->SetPreemptible(this, waiting);
  }

  void ReadHeader() {
    head_ = false;
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(boost::none);  // checked per route once the header is in
    stream_.expires_after(HeaderTimeout());
    Waiting(true);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    Waiting(false);
    if (core_->stopped()) return Close();
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::eof ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset) {
      return Close();
    }
    started_ = core_->ctx().clock->Now();
    if (ec == http::error::header_limit) return Fail(431, "request header fields too large");
    if (ec) return Fail(400, "malformed HTTP request: " + ec.message());
    const auto& header = parser_->get();
    const std::string target(header.target());
    if (target.empty() || target[0] != '/') return Fail(400, "the request target must be a path");
    const std::string path = target.substr(0, target.find('?'));
    if (slot_ == Slot::kProbe && !IsProbe(header.method_string(), path)) {
      return Fail(TryAgainLater(1, "too many connections; try again later"));
    }
    head_ = header.method() == http::verb::head;
    const Router::Match match = core_->router().Find(head_ ? "GET" : header.method_string(), path);
    uint64_t limit = match.route && match.route->max_body_bytes ? *match.route->max_body_bytes
                                                                : config().max_body_bytes;
    if (slot_ == Slot::kProbe) limit = std::min<uint64_t>(limit, kHeaderLimit);
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
      self->Waiting(true);
      self->timer_.expires_after(self->ReadTimeout());
      self->timer_.async_wait([weak = std::weak_ptr<HttpSession>(self)](beast::error_code ec) {
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
    Waiting(false);
    timer_.cancel();
    if (core_->stopped()) return Close();
    if (body_timed_out_) return Fail(408, "the request body took too long");
    if (ec == http::error::body_limit) {
      return Fail(413, "the request body is larger than " + std::to_string(body_limit_) + " bytes");
    }
    if (IsMalformed(ec)) return Fail(400, "malformed request body: " + ec.message());
    if (ec) return Close();
    http::request<http::string_body> message = parser_->release();
    HttpRequest request;
    method_ = std::string(message.method_string());
    request.method = head_ ? "GET" : method_;  // HEAD is GET without the body
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
    // A probe slot serves one request, so that it is soon free for the next probe.
    keep_alive_ = message.keep_alive() && slot_ != Slot::kProbe;
    replied_ = false;
    // The reply callback owns the session: a handler that answers later (after a store write on
    // the store thread, or from the read pool) finds it alive; once the server stops, Send drops
    // the reply.
    core_->Dispatch(
        std::move(request),
        [self = shared_from_this()](HttpReply reply) { self->Send(std::move(reply)); }, &route_);
  }

  // An error before dispatch: reply and close (the rest of the request is not read).
  void Fail(int status, const std::string& message) { Fail(HttpReply::Error(status, message)); }
  void Fail(HttpReply reply) {
    keep_alive_ = false;
    drain_ = true;
    route_ = "invalid";
    method_ = parser_ ? std::string(parser_->get().method_string()) : "";
    replied_ = false;
    Send(std::move(reply));
  }

  void Send(HttpReply reply) {
    if (replied_ || core_->stopped()) return;
    replied_ = true;
    if (reply.event_stream && !head_ && core_->open_streams() >= core_->max_streams()) {
      core_->metrics().StreamRejected();
      reply = TryAgainLater(5, "too many event streams: " + std::to_string(core_->max_streams()) +
                                   " are open, the most this server keeps; try again later");
      keep_alive_ = false;  // an event source reconnects on a connection of its own
    }
    if (reply.body.size() > kMaxReplyBytes) {
      reply = HttpReply::TooLarge("the reply", reply.body.size(), kMaxReplyBytes);
    }
    core_->metrics().Request(route_, method_, reply.status, core_->ctx().clock->Now() - started_);
    if (reply.event_stream && !head_) return HandOverToStream(std::move(reply));
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(reply.status), 11);
    res->set(http::field::server, "hubwatch");
    for (const auto& [name, value] : reply.headers) res->set(name, value);
    if (reply.status != 204 && reply.status != 304) {
      res->set(http::field::content_type, reply.content_type);
      res->body() = std::move(reply.body);
    }
    // HEAD: the GET reply's head, Content-Length included, without the body (a stream's head
    // has no length and closes).
    keep_alive_ = keep_alive_ && !reply.event_stream;
    res->keep_alive(keep_alive_);
    if (!reply.event_stream) res->prepare_payload();
    if (head_) res->body().clear();
    stream_.expires_after(ReadTimeout());
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res](beast::error_code ec, size_t) {
                        if (!ec && self->drain_ && !self->core_->stopped()) {
                          return self->DrainAndClose();
                        }
                        if (ec || !res->keep_alive() || self->core_->stopped()) {
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
    Waiting(true);
    stream_.async_read_some(asio::buffer(sink_),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ > kMaxDrain) return self->Close();
                              self->DrainAndClose();
                            });
  }

  // The socket goes to an SseStream, which takes over this session's general slot.
  void HandOverToStream(HttpReply reply) {
    std::string head =
        "HTTP/1.1 200 OK\r\nServer: hubwatch\r\nContent-Type: " + reply.content_type + "\r\n";
    for (const auto& [name, value] : reply.headers) head += name + ": " + value + "\r\n";
    head += "X-Accel-Buffering: no\r\nConnection: close\r\n\r\n" + reply.body;
    auto stream = std::make_shared<SseStream>(std::move(stream_), *reply.event_stream,
                                              std::move(head), core_);
    core_->Unregister(this);
    stream->Start();
  }

  beast::tcp_stream stream_;
  std::shared_ptr<ServerCore> core_;
  const Slot slot_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  SteadyTime started_{};
  std::string route_ = "invalid";
  std::string method_;
  uint64_t body_limit_ = 0;
  bool keep_alive_ = false;
  bool replied_ = false;
  bool drain_ = false;
  bool head_ = false;            // a HEAD request: the reply goes without its body
  bool body_timed_out_ = false;  // an unread request body may follow: drain before closing
  asio::steady_timer timer_;     // the body deadline
  char sink_[16 * 1024];
  uint64_t drained_ = 0;
};

}  // namespace

void StartHttpSession(tcp::socket socket, std::shared_ptr<ServerCore> core, Slot slot) {
  auto session = std::make_shared<HttpSession>(std::move(socket), std::move(core), slot);
  session->Start();
}

}  // namespace hubwatch::api
