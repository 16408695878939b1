// The network side of fakehub: Boost.Beast parses requests, HubState decides, and responses are
// written by hand so faults (reset, truncation, wrong Content-Length) can break the protocol on
// purpose. Virtual file content streams in 64 KiB chunks, so a "10 GB" file costs no memory.

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <thread>

#include "tests/fakehub/fakehub.h"
#include "tests/fakehub/fixture_loader.h"
#include "tests/fakehub/hub_state.h"
#include "tests/fakehub/webhook.h"
#include "tracker/hub/url.h"

namespace hubwatch::fakehub {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kChunk = 64 * 1024;

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<HubState> state, std::string server, uint64_t id)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        state_(std::move(state)),
        server_(std::move(server)),
        id_(id) {}

  void Read() {
    parser_.emplace();
    parser_->body_limit(1 << 20);
    parser_->header_limit(64 * 1024);
    http::async_read(
        socket_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec) return Close();
    const auto& message = parser_->get();
    FakeRequest request;
    request.server = server_;
    request.method = std::string(message.method_string());
    const std::string target(message.target());
    const size_t q = target.find('?');
    request.path = target.substr(0, q);
    request.query = q == std::string::npos ? "" : target.substr(q + 1);
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = message.body();
    request.connection = id_;
    keep_alive_ = message.keep_alive();
    response_ = state_->Handle(request);
    if (response_.delay.count() > 0) {
      timer_.expires_after(response_.delay);
      timer_.async_wait([self = shared_from_this()](beast::error_code) { self->Write(); });
      return;
    }
    Write();
  }

  void Write() {
    FakeResponse& r = response_;
    if (r.wire == WireFault::kReset) {
      beast::error_code ignored;
      socket_.set_option(tcp::socket::linger(true, 0), ignored);
      return Close();
    }
    const bool no_body = r.status == 304 || r.status == 204 || r.status < 200;
    uint64_t length = no_body ? 0 : r.body_size();
    if (r.wire == WireFault::kTruncate)
      send_limit_ = length / 2;
    else
      send_limit_ = UINT64_MAX;
    close_after_ = !keep_alive_ || r.wire != WireFault::kNone;
    uint64_t declared = length;
    if (r.wire == WireFault::kWrongLength && length >= 8) declared = length - 7;
    std::string head =
        "HTTP/1.1 " + std::to_string(r.status) + " " +
        std::string(http::obsolete_reason(http::int_to_status(static_cast<unsigned>(r.status)))) +
        "\r\n";
    for (const auto& [name, value] : r.headers) head += name + ": " + value + "\r\n";
    if (!no_body) head += "Content-Length: " + std::to_string(declared) + "\r\n";
    head += close_after_ ? "Connection: close\r\n\r\n" : "Connection: keep-alive\r\n\r\n";
    pos_ = 0;
    end_ = (r.head || no_body) ? 0 : std::min(length, send_limit_);
    out_ = std::move(head);
    asio::async_write(socket_, asio::buffer(out_),
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) return self->Close();
                        self->WriteBody();
                      });
  }

  void WriteBody() {
    if (pos_ >= end_) return Done();
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, end_ - pos_));
    out_.resize(n);
    if (response_.blob) {
      response_.blob->Read(response_.begin + pos_, n, out_.data());
      if (response_.huge_header_claim && response_.begin + pos_ < 8) {
        const uint64_t claim = 10'000'000'000ull;
        for (uint64_t i = response_.begin + pos_; i < 8 && i < response_.begin + pos_ + n; ++i) {
          out_[i - response_.begin - pos_] = static_cast<char>((claim >> (8 * i)) & 0xff);
        }
      }
    } else {
      out_.assign(response_.body, pos_, n);
    }
    pos_ += n;
    asio::async_write(socket_, asio::buffer(out_),
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) return self->Close();
                        self->WriteBody();
                      });
  }

  void Done() {
    if (close_after_) {
      beast::error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_send, ignored);
      return Close();
    }
    response_ = FakeResponse();
    Read();
  }

  void Close() {
    beast::error_code ignored;
    socket_.close(ignored);
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<HubState> state_;
  std::string server_;
  uint64_t id_;
  bool keep_alive_ = true;
  bool close_after_ = false;
  FakeResponse response_;
  std::string out_;
  uint64_t pos_ = 0, end_ = 0, send_limit_ = UINT64_MAX;
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(asio::io_context& io, std::shared_ptr<HubState> state, std::string name)
      : acceptor_(io), state_(std::move(state)), name_(std::move(name)) {}

  Result<uint16_t> Bind(const std::string& host, uint16_t port) {
    beast::error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    if (ec) return Error::InvalidInput("bad listen address " + host);
    if (!address.is_loopback())
      return Error::InvalidInput("fakehub listens on loopback only, not " + host);
    tcp::endpoint endpoint(address, port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      return Error::Io("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                       ec.message());
    return acceptor_.local_endpoint().port();
  }

  void Accept() {
    acceptor_.async_accept([self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) {
        socket.set_option(tcp::no_delay(true), ec);
        std::make_shared<Session>(std::move(socket), self->state_, self->name_,
                                  ++self->connections_)
            ->Read();
      }
      self->Accept();
    });
  }

  void Close() {
    beast::error_code ignored;
    acceptor_.close(ignored);
  }

 private:
  tcp::acceptor acceptor_;
  std::shared_ptr<HubState> state_;
  std::string name_;
  uint64_t connections_ = 0;
};

}  // namespace

class FakeHub::Server {
 public:
  explicit Server(std::shared_ptr<HubState> state)
      : hub_(std::make_shared<Listener>(io_, state, "hub")),
        cdn_(std::make_shared<Listener>(io_, state, "cdn")) {}
  ~Server() { Stop(); }

  Status Start(const FakeHubOptions& options, std::shared_ptr<HubState> state, bool watch_clock) {
    Result<uint16_t> hub_port = hub_->Bind(options.host, options.port);
    if (!hub_port.ok()) return hub_port.error();
    Result<uint16_t> cdn_port = cdn_->Bind(options.cdn_host, options.cdn_port);
    if (!cdn_port.ok()) return cdn_port.error();
    endpoint_ = "http://" + options.host + ":" + std::to_string(*hub_port);
    cdn_endpoint_ = "http://" + options.cdn_host + ":" + std::to_string(*cdn_port);
    state->SetOrigins(options.public_hub_url.empty() ? endpoint_ : options.public_hub_url,
                      options.public_cdn_url.empty() ? cdn_endpoint_ : options.public_cdn_url);
    hub_->Accept();
    cdn_->Accept();
    if (watch_clock) Watch(std::move(state));
    thread_ = std::thread([this] { io_.run(); });
    return Status::Ok();
  }

  void Stop() {
    if (!thread_.joinable()) return;
    asio::post(io_, [this] {
      hub_->Close();
      cdn_->Close();
      io_.stop();
    });
    thread_.join();
  }

  // Every 50 ms on the io thread: heads that moved on the replay clock become webhooks (queued
  // only; the sender's own thread delivers them).
  void Watch(std::shared_ptr<HubState> state) {
    tick_.expires_after(std::chrono::milliseconds(50));
    tick_.async_wait([this, state = std::move(state)](beast::error_code ec) mutable {
      if (ec) return;
      state->Tick();
      Watch(std::move(state));
    });
  }

  std::string endpoint_;
  std::string cdn_endpoint_;

 private:
  asio::io_context io_;
  asio::steady_timer tick_{io_};
  std::shared_ptr<Listener> hub_;
  std::shared_ptr<Listener> cdn_;
  std::thread thread_;
};

namespace {

// A front's origin: http(s)://host:port on loopback, nothing after the authority ("" passes).
Status CheckPublicUrl(const std::string& url) {
  if (url.empty()) return Status::Ok();
  const hub::UrlParts parts = hub::SplitUrl(url);
  const bool origin_only = (parts.scheme == "http" || parts.scheme == "https") &&
                           parts.has_authority && parts.path.empty() && !parts.has_query &&
                           !parts.has_fragment;
  if (!origin_only || !hub::IsLoopbackHost(hub::HostOf(url))) {
    return Error::InvalidInput("a public URL is http(s)://LOOPBACK-HOST:PORT with no path, got " +
                               url);
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<FakeHub>> FakeHub::Start(FakeHubOptions options) {
  std::vector<Repo> repos;
  std::vector<std::filesystem::path> dirs;
  if (!options.fixtures_dir.empty()) dirs.emplace_back(options.fixtures_dir);
  for (const std::string& dir : options.fixtures_dirs) dirs.emplace_back(dir);
  if (!dirs.empty()) {
    Result<std::vector<Repo>> loaded = LoadFixtureDirs(dirs);
    if (!loaded.ok()) return loaded.error();
    repos = std::move(loaded).value();
  }
  for (Repo& repo : options.extra_repos) repos.push_back(std::move(repo));
  options.extra_repos.clear();
  for (const std::string* url : {&options.public_hub_url, &options.public_cdn_url}) {
    if (Status s = CheckPublicUrl(*url); !s.ok()) return s.error();
  }
  std::optional<WebhookTarget> webhook;
  if (!options.webhook_url.empty()) {
    Result<WebhookTarget> target = ParseWebhookUrl(options.webhook_url);
    if (!target.ok()) return target.error();
    webhook = std::move(target).value();
  }
  std::unique_ptr<FakeHub> hub(new FakeHub());
  hub->state_ = std::make_shared<HubState>(options, std::move(repos));
  if (webhook) {
    HubState* state = hub->state_.get();  // outlives the sender: ~FakeHub stops it first
    hub->webhooks_ = std::make_unique<WebhookSender>(
        std::move(*webhook), options.webhook_secret,
        [state](LoggedRequest entry) { state->AppendLog(std::move(entry)); });
  }
  hub->server_ = std::make_unique<Server>(hub->state_);
  Status started = hub->server_->Start(options, hub->state_, webhook.has_value());
  if (!started.ok()) return started.error();
  if (hub->webhooks_) {
    WebhookSender* sender = hub->webhooks_.get();
    hub->state_->SetWebhookSink([sender](std::string body) { sender->Enqueue(std::move(body)); });
  }
  return hub;
}

FakeHub::~FakeHub() { Stop(); }
void FakeHub::Stop() {
  if (server_) server_->Stop();
  if (webhooks_) {
    state_->SetWebhookSink(nullptr);
    webhooks_->Stop();
  }
}
std::string FakeHub::endpoint() const { return server_->endpoint_; }
std::string FakeHub::cdn_endpoint() const { return server_->cdn_endpoint_; }
void FakeHub::AddFault(FaultRule rule) { state_->AddFault(std::move(rule)); }
void FakeHub::ClearFaults() { state_->ClearFaults(); }
std::vector<LoggedRequest> FakeHub::RequestLog() const { return state_->Log(); }
void FakeHub::ClearLog() { state_->ClearLog(); }
Status FakeHub::SuperSquash(const std::string& repo, const std::string& branch,
                            const std::string& message) {
  return state_->SuperSquash(repo, branch, message);
}
Status FakeHub::DeleteRepo(const std::string& repo) { return state_->DeleteRepo(repo); }
Status FakeHub::SetGated(const std::string& repo, std::optional<std::string> mode) {
  return state_->SetGated(repo, std::move(mode));
}
Status FakeHub::SetDisabled(const std::string& repo, bool disabled) {
  return state_->SetDisabled(repo, disabled);
}
Status FakeHub::RenameRepo(const std::string& from, const std::string& to) {
  return state_->RenameRepo(from, to);
}
Status FakeHub::PushCommit(const std::string& repo, const std::map<std::string, std::string>& files,
                           const std::string& title, std::string* new_sha) {
  return state_->PushCommit(repo, files, {}, title, "", new_sha);
}
void FakeHub::AdvanceReplayClock(std::chrono::seconds by) { state_->AdvanceReplayClock(by); }
void FakeHub::ResetRateLimits() { state_->ResetRateLimits(); }
void FakeHub::SetRelativeLinks(bool relative) { state_->SetRelativeLinks(relative); }
size_t FakeHub::repo_count() const { return state_->repo_count(); }
Status FakeHub::AddRepos(std::vector<Repo> repos) { return state_->AddRepos(std::move(repos)); }
Result<std::vector<std::string>> FakeHub::AddSpamChildren(const std::string& upstream, int count,
                                                          const std::string& relation) {
  return state_->AddSpamChildren(upstream, count, relation);
}

}  // namespace hubwatch::fakehub
