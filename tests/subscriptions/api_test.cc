#include <gtest/gtest.h>

#include "daemon/subscriptions/signature.h"
#include "daemon/subscriptions/subscriptions_api.h"
#include "tests/subscriptions/test_support.h"

namespace hubwatch::subscriptions {
namespace {

using store::Store;
using store::Subscription;

class Api : public ::testing::Test {
 protected:
  Api() : store_(testing::OpenStore()), access_(*store_), api_(access_, matcher_, false, clock_) {
    api_.on_change = [this] { ++changes_; };
  }

  // The reply's status and its body parsed (null when empty).
  struct Reply {
    int status = 0;
    nlohmann::json body;
  };
  static Reply Parse(const api::HttpReply& r) {
    EXPECT_EQ(r.content_type, "application/json");
    return {r.status, r.body.empty() ? nlohmann::json() : nlohmann::json::parse(r.body)};
  }
  Reply Create(const nlohmann::json& body) {
    std::optional<Reply> reply;
    api_.Create(body, [&](api::HttpReply r) { reply = Parse(r); });
    EXPECT_TRUE(reply.has_value());
    return reply.value_or(Reply{});
  }
  Reply Remove(const std::string& id) {
    std::optional<Reply> reply;
    api_.Remove(id, [&](api::HttpReply r) { reply = Parse(r); });
    EXPECT_TRUE(reply.has_value());
    return reply.value_or(Reply{});
  }
  Reply List() {
    std::optional<Reply> reply;
    api_.List([&](api::HttpReply r) { reply = Parse(r); });
    EXPECT_TRUE(reply.has_value());
    return reply.value_or(Reply{});
  }

  const ManualClock clock_{1790000000};
  std::unique_ptr<Store> store_;
  service::InlineStoreAccess access_;
  SubscriptionMatcher matcher_;
  SubscriptionsApi api_;
  int changes_ = 0;
};

TEST_F(Api, CreateGeneratesASecretShownOnlyOnce) {
  Reply r = Create({{"url", "https://hooks.example/a"},
                    {"repos", "google/*"},
                    {"kinds", {"chat_template"}},
                    {"min_impact", "breaking"}});
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body["url"], "https://hooks.example/a");
  EXPECT_EQ(r.body["repos"], "google/*");
  EXPECT_EQ(r.body["kinds"], nlohmann::json({"chat_template"}));
  EXPECT_EQ(r.body["min_impact"], "breaking");
  EXPECT_EQ(r.body["source"], "api");
  EXPECT_EQ(r.body["disabled"], false);
  EXPECT_EQ(r.body["created_at"], "2026-09-21T14:13:20Z");
  const std::string secret = r.body["secret"];
  EXPECT_TRUE(ParseSecret(secret).ok());
  EXPECT_EQ(changes_, 1);
  EXPECT_EQ(matcher_.size(), 1u);

  Reply list = List();
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.body["subscriptions"].size(), 1u);
  const nlohmann::json& s = list.body["subscriptions"][0];
  EXPECT_EQ(s["id"], r.body["id"]);
  EXPECT_FALSE(s.contains("secret"));
  EXPECT_EQ(list.body.dump().find(secret.substr(6)), std::string::npos);
  EXPECT_EQ(s["pending"], 0);
  EXPECT_EQ(s["delivered"], 0);
  EXPECT_EQ(s["failed"], 0);
}

TEST_F(Api, CreateAcceptsAGivenSecretAndDefaults) {
  Reply r = Create(
      {{"url", "https://hooks.example/b"}, {"secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}});
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body["secret"], "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  EXPECT_EQ(r.body["repos"], "*");
  EXPECT_EQ(r.body["kinds"], nlohmann::json::array());
  EXPECT_EQ(r.body["min_impact"], "behavioral");
}

TEST_F(Api, CreateRejectsBadInputWith400AndNeverEchoesTheSecret) {
  const std::vector<nlohmann::json> bad = {
      nlohmann::json::array(),
      {{"repos", "*"}},
      {{"url", 7}},
      {{"url", "ftp://hooks.example/"}},
      {{"url", "http://127.0.0.1:8080/"}},
      {{"url", "http://[::ffff:10.0.0.1]/"}},
      {{"url", "http://metadata.localhost/"}},
      {{"url", "https://hooks.example/"}, {"kinds", "config"}},
      {{"url", "https://hooks.example/"}, {"kinds", {"tokenizers"}}},
      {{"url", "https://hooks.example/"}, {"min_impact", "severe"}},
      {{"url", "https://hooks.example/"}, {"repos", ""}},
      {{"url", "https://hooks.example/"}, {"secret", "whsec_c2VjcmV0LXNob3J0"}},
      {{"url", "https://hooks.example/"}, {"secret", "hunter2hunter2hunter2hunter2"}},
      {{"url", "https://hooks.example/"}, {"callback", "x"}},
  };
  for (const nlohmann::json& body : bad) {
    Reply r = Create(body);
    EXPECT_EQ(r.status, 400) << body.dump();
    ASSERT_TRUE(r.body.contains("error")) << body.dump();
    const std::string error = r.body["error"];
    EXPECT_EQ(error.find("c2VjcmV0"), std::string::npos) << error;
    EXPECT_EQ(error.find("hunter2"), std::string::npos) << error;
  }
  EXPECT_TRUE(store_->outbox().ListSubscriptions()->empty());
  EXPECT_EQ(changes_, 0);
}

TEST_F(Api, PrivateTargetsPassWhenAllowed) {
  api_.set_allow_private_targets(true);
  EXPECT_EQ(Create({{"url", "http://127.0.0.1:8080/"}}).status, 201);
}

TEST_F(Api, RemoveDeletesAndFailsPendingDeliveries) {
  Reply created = Create({{"url", "https://hooks.example/a"}});
  ASSERT_EQ(created.status, 201);
  const int64_t id = created.body["id"];
  testing::AddAdvisory(*store_, "a/b", testing::Sha(1), {SubscriptionTarget(id)}, 5);
  EXPECT_EQ(List().body["subscriptions"][0]["pending"], 1);
  Reply removed = Remove(std::to_string(id));
  EXPECT_EQ(removed.status, 204);
  EXPECT_TRUE(removed.body.is_null());
  EXPECT_EQ(changes_, 2);
  EXPECT_EQ(matcher_.size(), 0u);
  EXPECT_EQ(store_->outbox().ListDeliveries(id)->at(0).state, store::DeliveryState::kFailed);
  EXPECT_EQ(Remove(std::to_string(id)).status, 404);
  for (const char* junk : {"", "abc", "-1", "0", "1x", "99999999999999999999999"}) {
    EXPECT_EQ(Remove(junk).status, 404) << junk;
  }
}

TEST_F(Api, ConfigSubscriptionsAreManagedInTheFile) {
  Subscription c;
  c.url = "https://config.example/";
  c.secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  c.source = store::Source::kConfig;
  Result<int64_t> id = store_->outbox().AddSubscription(c);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(Remove(std::to_string(*id)).status, 409);
  EXPECT_EQ(Create({{"url", "https://config.example/"}}).status, 409);
  EXPECT_TRUE(store_->outbox().GetSubscription(*id)->has_value());
  EXPECT_EQ(List().body["subscriptions"][0]["source"], "config");
}

}  // namespace
}  // namespace hubwatch::subscriptions
