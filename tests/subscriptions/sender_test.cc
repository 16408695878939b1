#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "daemon/subscriptions/curl_webhook_sender.h"
#include "tests/subscriptions/test_support.h"

namespace hubwatch::subscriptions {
namespace {

using testing::Receiver;

WebhookRequest Request(const std::string& url, bool allow_private) {
  WebhookRequest r;
  r.url = url;
  r.body = "{\"id\":\"x\"}";
  r.headers.Add("Content-Type", "application/json");
  r.allow_private_targets = allow_private;
  return r;
}

hub::TransportOutcome PostAndWait(boost::asio::io_context& io, WebhookSender& sender,
                                  WebhookRequest request) {
  std::optional<hub::TransportOutcome> outcome;
  sender.Post(std::move(request), [&](hub::TransportOutcome o) { outcome = std::move(o); });
  EXPECT_FALSE(outcome.has_value());  // never inside Post
  io.restart();
  io.run();  // the transfer holds the loop until its completion runs
  EXPECT_TRUE(outcome.has_value());
  return outcome.value_or(hub::TransportOutcome{});
}

TEST(CurlWebhookSender, PostsTheBodyAndReportsTheStatus) {
  Receiver receiver;
  receiver.set_default({202, {{"X-Reply", "yes"}}});
  boost::asio::io_context io;
  CurlWebhookSender sender(io, {.max_concurrent = 4, .user_agent = "hubwatch/test"});
  hub::TransportOutcome o = PostAndWait(io, sender, Request(receiver.url(), true));
  ASSERT_TRUE(o.ok()) << o.error->message;
  EXPECT_EQ(o.response.status, 202);
  EXPECT_EQ(o.response.headers.Get("x-reply"), "yes");
  ASSERT_EQ(receiver.requests().size(), 1u);
  EXPECT_EQ(receiver.requests()[0].body, "{\"id\":\"x\"}");
  EXPECT_EQ(receiver.requests()[0].headers.at("user-agent"), "hubwatch/test");
}

TEST(CurlWebhookSender, RefusesLoopbackByNameAndByAddressAtConnectTime) {
  Receiver receiver;
  boost::asio::io_context io;
  CurlWebhookSender sender(io);
  const std::string port = std::to_string(receiver.port());
  for (const std::string& url :
       {"http://localhost:" + port + "/", "http://127.0.0.1:" + port + "/",
        "http://2130706433:" + port + "/", "http://[::ffff:127.0.0.1]:" + port + "/"}) {
    hub::TransportOutcome o = PostAndWait(io, sender, Request(url, false));
    ASSERT_FALSE(o.ok()) << url;
    EXPECT_EQ(o.error->kind, hub::TransportErrorKind::kConnect) << url;
    EXPECT_TRUE(o.error->message.starts_with("refused to connect to a loopback address"))
        << url << ": " << o.error->message;
  }
  EXPECT_EQ(receiver.requests().size(), 0u);
  // With private targets allowed the same receiver answers.
  EXPECT_TRUE(PostAndWait(io, sender, Request("http://localhost:" + port + "/", true)).ok());
  EXPECT_EQ(receiver.requests().size(), 1u);
}

TEST(CurlWebhookSender, IgnoresProxiesFromTheEnvironment) {
  Receiver receiver;
  Receiver proxy;
  setenv("http_proxy", proxy.url("").c_str(), 1);
  boost::asio::io_context io;
  CurlWebhookSender sender(io);
  hub::TransportOutcome o = PostAndWait(io, sender, Request(receiver.url(), true));
  unsetenv("http_proxy");
  EXPECT_TRUE(o.ok());
  EXPECT_EQ(receiver.requests().size(), 1u);
  EXPECT_EQ(proxy.requests().size(), 0u);
}

TEST(CurlWebhookSender, ShutdownFailsTransfersInFlightAndLaterPosts) {
  Receiver receiver;
  receiver.set_default({200, {}, std::chrono::milliseconds(3000)});
  boost::asio::io_context io;
  CurlWebhookSender sender(io);
  std::optional<hub::TransportOutcome> slow;
  sender.Post(Request(receiver.url(), true), [&](hub::TransportOutcome o) { slow = std::move(o); });
  while (receiver.requests().empty()) io.run_for(std::chrono::milliseconds(5));
  const auto start = std::chrono::steady_clock::now();
  sender.Shutdown();
  io.restart();
  io.run();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_TRUE(slow.has_value());
  ASSERT_FALSE(slow->ok());
  EXPECT_EQ(slow->error->kind, hub::TransportErrorKind::kShutdown);
  hub::TransportOutcome later = PostAndWait(io, sender, Request(receiver.url(), true));
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.error->kind, hub::TransportErrorKind::kShutdown);
}

}  // namespace
}  // namespace hubwatch::subscriptions
