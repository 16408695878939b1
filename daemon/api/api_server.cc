// The listener of the API: accepts connections and gives each a slot (server_core.h) and an
// HTTP session (http_session.h), or one 503 when every slot is taken by a connection at work.

#include "daemon/api/api_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <memory>

#include "daemon/api/http_session.h"
#include "daemon/api/server_core.h"

namespace hubwatch::api {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

// The worker threads of the read pool.
constexpr int kReadThreads = 2;

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
  error_code ec;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec) return Error::InvalidInput("listen " + listen + ": not an IP address");
  return tcp::endpoint(address, static_cast<uint16_t>(p));
}

}  // namespace

class ApiServer::Impl : public std::enable_shared_from_this<Impl> {
 public:
  explicit Impl(std::shared_ptr<ServerCore> core)
      : core_(std::move(core)), acceptor_(core_->io()) {}

  Status Listen() {
    const std::string& listen = core_->ctx().config.listen;
    Result<tcp::endpoint> endpoint = ParseListen(listen);
    if (!endpoint.ok()) return endpoint.error();
    error_code ec;
    acceptor_.open(endpoint->protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(*endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return Error::Io("api: listening on " + listen + ": " + ec.message());
    port_ = acceptor_.local_endpoint().port();
    Accept();
    return Status::Ok();
  }

  void Stop() {
    error_code ignored;
    acceptor_.close(ignored);
    core_->Stop();
  }
  ServerCore& core() { return *core_; }
  uint16_t port() const { return port_; }

 private:
  void Accept() {
    acceptor_.async_accept([self = shared_from_this()](error_code ec, tcp::socket socket) {
      if (self->core_->stopped() || !self->acceptor_.is_open()) return;
      if (!ec) {
        // Replies go out whole: without this, Nagle's algorithm holds a reply's tail until the
        // client's delayed ACK (40 ms) whenever a write is split.
        error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        std::optional<Slot> slot = self->core_->SlotForNewConnection();
        // Every slot taken: a probe slot held by a connection that keeps the server waiting
        // goes to this one (server_core.h), so a stalled flood never shuts a probe out.
        if (!slot && self->core_->PreemptProbe()) slot = Slot::kProbe;
        if (slot) {
          StartHttpSession(std::move(socket), self->core_, *slot);
        } else {
          self->Reject(std::move(socket));
        }
      }
      self->Accept();
    });
  }

  // Every slot taken: one 503 and close, without reading the request.
  void Reject(tcp::socket socket) {
    core_->metrics().Rejected();
    const std::string body = R"({"error":"too many connections; try again later"})";
    auto out = std::make_shared<std::string>(
        "HTTP/1.1 503 Service Unavailable\r\nServer: hubwatch\r\nContent-Type: "
        "application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body);
    auto sock = std::make_shared<tcp::socket>(std::move(socket));
    asio::async_write(*sock, asio::buffer(*out), [sock, out](error_code, size_t) {
      error_code ignored;
      sock->shutdown(tcp::socket::shutdown_both, ignored);
      sock->close(ignored);
    });
  }

  std::shared_ptr<ServerCore> core_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
};

Result<std::unique_ptr<ApiServer>> ApiServer::Start(const config::ApiConfig& config,
                                                    ApiDeps deps) {
  if (!deps.io || !deps.store || !deps.metrics) {
    return Error::InvalidInput("api: io, store and metrics are required");
  }
  std::unique_ptr<ReadPool> pool;
  std::unique_ptr<BasisPreparer> preparer;
  std::shared_ptr<page::BasisCache> bases = page::MakeBasisCache(kBasisCacheBytes);
  if (deps.open_reader) {
    Result<std::unique_ptr<ReadPool>> started = ReadPool::Start(kReadThreads, deps.open_reader);
    if (!started.ok()) return Error::Io("api: opening the read pool: " + started.error().message);
    pool = std::move(started).value();
    Result<std::unique_ptr<BasisPreparer>> prep = BasisPreparer::Start(deps.open_reader, bases);
    if (!prep.ok()) return Error::Io("api: opening the estimates' reader: " + prep.error().message);
    preparer = std::move(prep).value();
  }
  auto impl = std::make_shared<Impl>(std::make_shared<ServerCore>(
      config, std::move(deps), std::move(pool), std::move(preparer), std::move(bases)));
  if (Status s = impl->Listen(); !s.ok()) return s.error();
  return std::unique_ptr<ApiServer>(new ApiServer(std::move(impl)));
}

ApiServer::ApiServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
ApiServer::~ApiServer() { Stop(); }
uint16_t ApiServer::port() const { return impl_->port(); }
void ApiServer::Stop() { impl_->Stop(); }
void ApiServer::OnNewAdvisories() { impl_->core().OnNewAdvisories(); }

}  // namespace hubwatch::api
