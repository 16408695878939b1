// hubwatch serve assembled: the HTTP API on the service's own listener and loop, the admin API
// scheduling what it adds, and webhooks for what the pipeline ingests - signed, one per
// advisory, verified here with the signature code's independent Verify and by content.

#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "daemon/subscriptions/signature.h"
#include "tests/api/http_client.h"
#include "tests/daemon/service_env.h"
#include "tests/subscriptions/test_support.h"

namespace hubwatch::service {
namespace {

using api::testing::HttpResponse;
using api::testing::Request;

constexpr const char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr const char kAdminToken[] = "admin-token-for-tests";

class ServiceWiringTest : public testing::ServiceTest {
 protected:
  // Calls `get` until `done(value)` holds or the work's timeout passes; returns the last value.
  template <class Get, class Done>
  auto WaitUntil(Get get, Done done) {
    return hubwatch::testing::WaitFor(get, done);
  }

  int64_t PendingDeliveries() {
    auto store = OpenStore();
    auto pending = store ? store->outbox().CountPendingDeliveries() : Result<int64_t>(-1);
    return pending.ok() ? *pending : -1;
  }

  int64_t Now() const {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

TEST_F(ServiceWiringTest, ServeAnswersTheApiAndDeliversSignedWebhooks) {
  subscriptions::testing::Receiver receiver;
  config::DaemonConfig config = Config({"google/gemma-7b-it"});
  config.subscriptions.push_back({.url = receiver.url(),
                                  .secret_file = WriteFile("hook.secret", kSecret),
                                  .repos = "google/*",
                                  .kinds = {},
                                  .min_impact = "behavioral",
                                  .backfill = true});  // the repo's whole past, as it is found
  config.webhooks.allow_private_targets = true;  // the receiver is on 127.0.0.1
  config.api.admin_token_file = WriteFile("admin.token", std::string(kAdminToken) + "\n");
  Start(config);
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  const uint16_t port = service_->api_port();
  ASSERT_NE(port, 0);  // bound before READY

  EXPECT_EQ(Request(port, "GET", "/readyz").status, 200);
  HttpResponse repos = Request(port, "GET", "/api/v1/repos");
  ASSERT_EQ(repos.status, 200);
  EXPECT_EQ(repos.json()["repos"][0]["id"], "google/gemma-7b-it");

  // The pipeline's advisories reach the API, all of them once the first poll has ended (its
  // revisions commit one at a time: listing earlier could see only some)...
  WaitUntil([&] { return Request(port, "GET", "/metrics"); },
            [](const HttpResponse& r) {
              return r.body.find("hubwatch_polls_total{outcome=\"ok\"} 1") != std::string::npos;
            });
  HttpResponse listed = WaitUntil(
      [&] { return Request(port, "GET", "/api/v1/advisories?repo=google/gemma-7b-it"); },
      [](const HttpResponse& r) { return r.status == 200 && !r.json()["advisories"].empty(); });
  ASSERT_EQ(listed.status, 200);
  std::set<std::string> advisory_ids;
  const nlohmann::json listed_json = listed.json();
  for (const auto& a : listed_json["advisories"]) advisory_ids.insert(a["id"]);
  ASSERT_FALSE(advisory_ids.empty());

  // ...and the subscription, once each, signed with its secret.
  auto hooks = WaitUntil([&] { return receiver.requests(); },
                         [&](const auto& r) { return r.size() >= advisory_ids.size(); });
  // The outbox has nothing left to send: no extra deliveries follow.
  EXPECT_TRUE(hubwatch::testing::WaitUntil([&] { return PendingDeliveries() == 0; }));
  hooks = receiver.requests();
  ASSERT_EQ(hooks.size(), advisory_ids.size());
  std::set<std::string> delivered, webhook_ids;
  for (const auto& h : hooks) {
    EXPECT_EQ(h.method, "POST");
    Status verified = subscriptions::Verify(kSecret, h.headers.at("webhook-id"),
                                            h.headers.at("webhook-timestamp"), h.body,
                                            h.headers.at("webhook-signature"), Now());
    EXPECT_TRUE(verified.ok()) << (verified.ok() ? "" : verified.error().message);
    const nlohmann::json osv = nlohmann::json::parse(h.body, nullptr, false);
    ASSERT_TRUE(osv.is_object());
    delivered.insert(osv["id"].get<std::string>());
    webhook_ids.insert(h.headers.at("webhook-id"));
  }
  EXPECT_EQ(delivered, advisory_ids);
  EXPECT_EQ(webhook_ids.size(), hooks.size());

  // Metrics count what happened.
  HttpResponse metrics = Request(port, "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("hubwatch_advisories_published_total " +
                              std::to_string(advisory_ids.size())),
            std::string::npos)
      << metrics.body;

  // The admin API adds a repo, and the scheduler polls it at once.
  const api::testing::Headers admin = {{"Authorization", std::string("Bearer ") + kAdminToken}};
  EXPECT_EQ(Request(port, "POST", "/api/v1/repos", R"({"id": "google/gemma-2-9b-it"})").status,
            401);
  HttpResponse added =
      Request(port, "POST", "/api/v1/repos", R"({"id": "google/gemma-2-9b-it"})", admin);
  EXPECT_EQ(added.status, 201) << added.body;
  HttpResponse revisions = WaitUntil(
      [&] { return Request(port, "GET", "/api/v1/repos/google/gemma-2-9b-it/revisions"); },
      [](const HttpResponse& r) { return r.status == 200 && r.json()["revisions"].size() == 2; });
  EXPECT_EQ(revisions.json()["revisions"].size(), 2u) << revisions.body;

  service_->Stop();
  EXPECT_EQ(Join(), 0);
  EXPECT_EQ(Request(port, "GET", "/healthz").status, 0);  // the listener is closed
}

TEST_F(ServiceWiringTest, AListenerThatCannotBindFailsTheStartWithAClearError) {
  subscriptions::testing::Receiver occupied;  // holds a port on 127.0.0.1
  config::DaemonConfig config = Config({"google/gemma-7b-it"});
  config.api.listen = "127.0.0.1:" + std::to_string(occupied.port());
  config.subscriptions.push_back({.url = occupied.url(),
                                  .secret_file = WriteFile("hook.secret", kSecret),
                                  .repos = "*",
                                  .kinds = {},
                                  .min_impact = "behavioral"});
  config.webhooks.allow_private_targets = true;
  Start(config);
  EXPECT_EQ(Join(), 1);
  EXPECT_TRUE(notify_.WaitFor("STATUS=failed: API on 127.0.0.1:", 5));
  // A start that failed leaves no trace of the configuration in the store.
  auto store = store::Store::Open(config.store);
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_TRUE((*store)->outbox().ListSubscriptions()->empty());
  EXPECT_TRUE((*store)->repos().ListRepos()->empty());
}

TEST_F(ServiceWiringTest, ABadSubscriptionFailsTheStartAndNamesTheEntry) {
  config::DaemonConfig config = Config({"google/gemma-7b-it"});
  config.subscriptions.push_back(
      {"http://127.0.0.1:9/hook", dir_ + "/missing.secret", "*", {}, "behavioral"});
  config.webhooks.allow_private_targets = true;
  Start(config);
  EXPECT_EQ(Join(), 2);  // bad input
  EXPECT_TRUE(notify_.WaitFor("STATUS=failed: subscriptions[0].secret_file", 5));
}

}  // namespace
}  // namespace hubwatch::service
