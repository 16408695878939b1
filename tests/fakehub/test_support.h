#pragma once

// Helpers for fakehub's own tests: requests straight into HubState, plain HTTP/1.1 over
// loopback with Beast (any method, unlike the curl transport), and a webhook receiver.
// Header-only; test code only.

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/fakehub/hub_state.h"

namespace hubwatch::fakehub::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// A request handled by `state` directly: "GET", "/api/models?sort=lastModified".
inline FakeResponse Handle(HubState& state, const std::string& method, const std::string& target,
                           std::string body = "", HeaderList headers = {}) {
  FakeRequest request;
  request.method = method;
  const size_t q = target.find('?');
  request.path = target.substr(0, q);
  request.query = q == std::string::npos ? "" : target.substr(q + 1);
  request.body = std::move(body);
  request.headers = std::move(headers);
  return state.Handle(request);
}

inline std::string HeaderOf(const FakeResponse& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return "";
}

struct WireResponse {
  int status = 0;  // 0: no answer
  std::map<std::string, std::string> headers;
  std::string body;
};

// One HTTP/1.1 exchange with "http://127.x.y.z:PORT/target".
inline WireResponse HttpCall(const std::string& method, const std::string& url,
                             const std::string& body = "") {
  WireResponse out;
  const std::string rest = url.substr(url.find("//") + 2);
  const std::string authority = rest.substr(0, rest.find('/'));
  const std::string target = rest.size() > authority.size() ? rest.substr(authority.size()) : "/";
  const size_t colon = authority.rfind(':');
  asio::io_context io;
  tcp::socket socket(io);
  beast::error_code ec;
  socket.connect(tcp::endpoint(asio::ip::make_address(authority.substr(0, colon)),
                               static_cast<uint16_t>(std::stoi(authority.substr(colon + 1)))),
                 ec);
  if (ec) return out;
  http::request<http::string_body> request{http::string_to_verb(method), target, 11};
  request.set(http::field::host, authority);
  request.set(http::field::content_type, "application/json");
  request.body() = body;
  request.prepare_payload();
  http::write(socket, request, ec);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  if (!ec) http::read(socket, buffer, response, ec);
  if (ec) return out;
  out.status = static_cast<int>(response.result_int());
  for (const auto& field : response) {
    out.headers[std::string(field.name_string())] = std::string(field.value());
  }
  out.body = response.body();
  return out;
}

// Accepts webhook POSTs on 127.0.0.1 (a port of its own) and answers each with `status`.
class WebhookReceiver {
 public:
  struct Delivery {
    std::string target;
    std::map<std::string, std::string> headers;
    std::string body;
    nlohmann::json json;
  };

  explicit WebhookReceiver(int status = 200) : acceptor_(io_), status_(status) {
    tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(endpoint.protocol());
    acceptor_.bind(endpoint);
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { Serve(); });
  }
  ~WebhookReceiver() {
    stopping_ = true;
    beast::error_code ec;
    tcp::socket wake(io_);
    wake.connect(acceptor_.local_endpoint(), ec);  // unblocks accept()
    thread_.join();
  }

  std::string url(const std::string& path = "/hooks") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  // The deliveries so far, once there are at least n of them or `timeout` has passed.
  std::vector<Delivery> WaitFor(size_t n,
                                std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    arrived_.wait_for(lock, timeout, [&] { return deliveries_.size() >= n; });
    return deliveries_;
  }

 private:
  void Serve() {
    while (!stopping_) {
      beast::error_code ec;
      tcp::socket socket(io_);
      acceptor_.accept(socket, ec);
      if (ec || stopping_) continue;
      beast::flat_buffer buffer;
      http::request<http::string_body> request;
      http::read(socket, buffer, request, ec);
      if (ec) continue;
      Delivery d;
      d.target = std::string(request.target());
      for (const auto& field : request) {
        d.headers[std::string(field.name_string())] = std::string(field.value());
      }
      d.body = request.body();
      d.json = nlohmann::json::parse(d.body, nullptr, false);
      {
        std::lock_guard lock(mutex_);
        deliveries_.push_back(std::move(d));
      }
      arrived_.notify_all();
      http::response<http::string_body> response{static_cast<http::status>(status_), 11};
      response.body() = "{}";
      response.prepare_payload();
      http::write(socket, response, ec);
    }
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  int status_;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_ = false;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<Delivery> deliveries_;
  std::thread thread_;
};

}  // namespace hubwatch::fakehub::testing
