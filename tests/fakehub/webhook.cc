#include "tests/fakehub/webhook.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>

namespace hubwatch::fakehub {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

}  // namespace

Result<WebhookTarget> ParseWebhookUrl(const std::string& url) {
  auto bad = [&](const std::string& why) {
    return Error::InvalidInput("webhook URL \"" + url + "\": " + why);
  };
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) return bad("only http:// to a loopback address is allowed");
  const std::string rest = url.substr(kScheme.size());
  const size_t slash = rest.find_first_of("/?");
  const std::string authority = rest.substr(0, slash);
  WebhookTarget target;
  target.target = slash == std::string::npos ? "/" : rest.substr(slash);
  if (target.target.starts_with("?")) target.target = "/" + target.target;
  const size_t colon = authority.rfind(':');
  target.host = authority.substr(0, colon);
  if (colon != std::string::npos) {
    const std::string port = authority.substr(colon + 1);
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535)
      return bad("bad port \"" + port + "\"");
    target.port = static_cast<uint16_t>(value);
  }
  beast::error_code ec;
  const asio::ip::address_v4 address = asio::ip::make_address_v4(target.host, ec);
  if (ec) return bad("the host must be an IPv4 address in 127.0.0.0/8");
  if ((address.to_uint() >> 24) != 127) return bad("fakehub only calls 127.0.0.0/8");
  return target;
}

WebhookSender::WebhookSender(WebhookTarget target, std::string secret, LogFn log,
                             std::chrono::milliseconds timeout)
    : target_(std::move(target)),
      secret_(std::move(secret)),
      log_(std::move(log)),
      timeout_(timeout),
      thread_([this] { Run(); }) {}

WebhookSender::~WebhookSender() { Stop(); }

void WebhookSender::Enqueue(std::string body) {
  std::lock_guard lock(mutex_);
  if (stopping_) return;
  queue_.push_back(std::move(body));
  wake_.notify_one();
}

void WebhookSender::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void WebhookSender::Run() {
  while (true) {
    std::string body;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      body = std::move(queue_.front());
      queue_.pop_front();
    }
    const int status = Deliver(body);
    LoggedRequest entry;
    entry.server = "webhook";
    entry.method = "POST";
    const size_t q = target_.target.find('?');
    entry.path = target_.target.substr(0, q);
    entry.query = q == std::string::npos ? "" : target_.target.substr(q + 1);
    entry.status = status;
    entry.bytes = body.size();
    entry.user_agent = "fakehub-webhooks";
    entry.body = std::move(body);
    log_(std::move(entry));
  }
}

// One POST on a fresh connection, all of it within timeout_.
int WebhookSender::Deliver(const std::string& body) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  http::request<http::string_body> request{http::verb::post, target_.target, 11};
  request.set(http::field::host, target_.host + ":" + std::to_string(target_.port));
  request.set(http::field::user_agent, "fakehub-webhooks");
  request.set(http::field::content_type, "application/json");
  request.set("X-Webhook-Secret", secret_);
  request.set(http::field::connection, "close");
  request.body() = body;
  request.prepare_payload();
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  int status = 0;
  beast::error_code ignored;
  const tcp::endpoint endpoint(asio::ip::make_address_v4(target_.host, ignored), target_.port);
  stream.expires_after(timeout_);
  stream.async_connect(endpoint, [&](beast::error_code ec) {
    if (ec) return;
    http::async_write(stream, request, [&](beast::error_code ec, size_t) {
      if (ec) return;
      http::async_read(stream, buffer, response, [&](beast::error_code ec, size_t) {
        if (!ec) status = static_cast<int>(response.result_int());
      });
    });
  });
  io.run();
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  return status;
}

}  // namespace hubwatch::fakehub
