#pragma once

// Test support for the subscriptions suite: temp store files, advisories with outbox rows, and
// Receiver, a real HTTP server on 127.0.0.1:0 (loopback only) that records what it receives and
// answers with scripted statuses.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tracker/store/store.h"

namespace hubwatch::subscriptions::testing {

// A database path in the test's temp dir, removed (with -wal/-shm) before and after.
class TempDb {
 public:
  TempDb() {
    path_ = ::testing::TempDir() + "hubwatch_subs_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
    Remove();
  }
  ~TempDb() { Remove(); }
  const std::string& path() const { return path_; }

 private:
  void Remove() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path_ + suffix).c_str());
  }
  std::string path_;
};

inline std::unique_ptr<store::Store> OpenStore(const std::string& path = ":memory:") {
  Result<std::unique_ptr<store::Store>> s = store::Store::Open(path);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? std::move(s).value() : nullptr;
}

// Ingests one revision of `repo` with one change and one advisory "x_HUBWATCH-<sha>" (OSV
// {"id", "summary"}) queued for `targets`, first seen at `now`. Adds the repo if needed.
inline std::string AddAdvisory(store::Store& s, const std::string& repo, const std::string& sha,
                               const std::vector<std::string>& targets, int64_t now) {
  store::RepoRecord r;
  r.id = repo;
  r.refs = {"main"};
  r.added_at = now;
  EXPECT_TRUE(s.repos().AddRepo(r).ok());
  store::RevisionIngest in;
  in.revision.repo = repo;
  in.revision.sha = sha;
  in.revision.refs = {"main"};
  in.revision.first_seen_at = now;
  diff::Change c;
  c.kind = diff::ChangeKind::kChatTemplate;
  c.impact = diff::Impact::kBehavioral;
  c.path = "tokenizer_config.json";
  c.summary = "chat template changed";
  in.changes = {c};
  const std::string id = "x_HUBWATCH-" + sha.substr(28);
  in.advisories = {{0,
                    id,
                    {{"id", id}, {"summary", "chat template changed \xc3\xa9"}},
                    "2026-12-02T00:00:00Z",
                    "2026-12-02T00:00:00Z",
                    targets}};
  in.ref_heads = {{"main", sha}};
  Result<store::IngestOutcome> out = s.revisions().Ingest(in);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
  return id;
}

inline std::string Sha(int n) {
  std::string hex = std::to_string(n);
  return std::string(40 - hex.size(), 'a') + hex;
}

// An HTTP receiver on 127.0.0.1:0, served by a thread of its own. Every response closes its
// connection. Answers the scripted statuses in order, then default_status.
class Receiver {
 public:
  struct Request {
    std::string method;
    std::string target;
    std::map<std::string, std::string> headers;  // names lower-cased
    std::string body;
  };
  struct Reply {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers{};
    std::chrono::milliseconds delay{0};
  };

  Receiver()
      : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}),
        port_(acceptor_.local_endpoint().port()) {
    Accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Receiver() {
    io_.stop();
    thread_.join();
  }

  uint16_t port() const { return port_; }
  std::string url(const std::string& path = "/hook") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  void Script(std::vector<Reply> replies) {
    std::lock_guard<std::mutex> lock(mu_);
    script_.assign(replies.begin(), replies.end());
  }
  void set_default(Reply reply) {
    std::lock_guard<std::mutex> lock(mu_);
    default_ = std::move(reply);
  }
  std::vector<Request> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  struct Session {
    explicit Session(boost::asio::ip::tcp::socket s)
        : socket(std::move(s)), timer(socket.get_executor()) {}
    boost::asio::ip::tcp::socket socket;
    boost::asio::steady_timer timer;
    boost::beast::flat_buffer buffer;
    boost::beast::http::request<boost::beast::http::string_body> request;
    boost::beast::http::response<boost::beast::http::string_body> response;
  };

  void Accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, boost::asio::ip::tcp::socket s) {
      if (ec) return;
      auto session = std::make_shared<Session>(std::move(s));
      boost::beast::http::async_read(session->socket, session->buffer, session->request,
                                     [this, session](boost::system::error_code read_ec, size_t) {
                                       if (!read_ec) Answer(session);
                                     });
      Accept();
    });
  }

  void Answer(const std::shared_ptr<Session>& session) {
    Request request;
    request.method = std::string(session->request.method_string());
    request.target = std::string(session->request.target());
    for (const auto& field : session->request) {
      std::string name(field.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      request.headers[name] = std::string(field.value());
    }
    request.body = session->request.body();
    const Reply reply = Next(std::move(request));
    session->response.result(static_cast<unsigned>(reply.status));
    session->response.version(11);
    session->response.keep_alive(false);
    for (const auto& [name, value] : reply.headers) session->response.set(name, value);
    if (reply.status >= 200 && reply.status != 204 && reply.status != 304) {
      session->response.body() = "{}";
    }
    session->response.prepare_payload();
    session->timer.expires_after(reply.delay);
    session->timer.async_wait([session](boost::system::error_code) {
      boost::beast::http::async_write(
          session->socket, session->response, [session](boost::system::error_code, size_t) {
            boost::system::error_code ignored;
            session->socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
          });
    });
  }

  Reply Next(Request request) {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(std::move(request));
    if (script_.empty()) return default_;
    Reply r = script_.front();
    script_.pop_front();
    return r;
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  uint16_t port_;
  std::thread thread_;
  mutable std::mutex mu_;
  std::deque<Reply> script_;
  Reply default_;
  std::vector<Request> requests_;
};

}  // namespace hubwatch::subscriptions::testing
