// Contract tests: POST /api/v1/hub-webhooks, the Hub's webhooks as change hints (secret checks,
// scopes, moves, rate limit). The recording ServiceControl stands for the scheduler; the
// end-to-end path (a webhook polls the repo) is in tests/daemon/hints_test.cc.

#include "tests/api/api_env.h"

namespace hubwatch::api::testing {
namespace {

constexpr const char kSecret[] = "hub-webhook-secret";

std::string Event(const std::string& scope, const std::string& name,
                  const std::string& extra = "") {
  return R"({"event": {"action": "update", "scope": ")" + scope + R"("}, "repo": {"type": "model",
      "name": ")" +
         name + R"(", "id": "6273", "private": false, "owner": {"id": "62"}},
      "webhook": {"id": "65a1", "version": 3})" +
         extra + "}";
}

class HubWebhookTest : public ApiTest {
 protected:
  HttpResponse Send(const std::string& body, const std::string& secret = kSecret) {
    return Post("/api/v1/hub-webhooks", body, {{"X-Webhook-Secret", secret}});
  }
};

TEST_F(HubWebhookTest, TheSecretIsRequiredAndCompared) {
  deps_.hub_webhook_secret = kSecret;
  StartServer();
  const std::string body = Event("repo.content", "google/gemma-7b-it");
  EXPECT_EQ(Post("/api/v1/hub-webhooks", body).status, 401);
  EXPECT_EQ(Send(body, "hub-webhook-secreT").status, 403);
  EXPECT_EQ(Send(body, std::string(kSecret) + "x").status, 403);
  EXPECT_EQ(Send(body, "").status, 403);
  EXPECT_TRUE(control_.hints().empty());
  HttpResponse ok = Send(body);
  ASSERT_EQ(ok.status, 202) << ok.body;
  EXPECT_EQ(ok.json()["repo"], "google/gemma-7b-it");
  EXPECT_EQ(ok.json()["poll"], "queued");
  ASSERT_EQ(control_.hints().size(), 1u);
  EXPECT_EQ(control_.hints()[0].second, store::PollTrigger::kWebhook);
  EXPECT_EQ(Send(body).json()["poll"], "already queued");  // deduplicated by the scheduler
}

TEST_F(HubWebhookTest, WithoutAConfiguredSecretNoWebhookIsExpected) {
  StartServer();
  HttpResponse r = Send(Event("repo.content", "google/gemma-7b-it"));
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("hub.webhook_secret_file"), std::string::npos);
  EXPECT_TRUE(control_.hints().empty());
}

TEST_F(HubWebhookTest, RepoScopesHintOtherScopesAndReposAreIgnored) {
  deps_.hub_webhook_secret = kSecret;
  StartServer();
  EXPECT_EQ(Send(Event("repo", "google/gemma-7b-it")).status, 202);  // delete, update
  EXPECT_EQ(Send(Event("repo.config", "meta-llama/Meta-Llama-3-8B")).status, 202);
  EXPECT_EQ(Send(Event("repo.content.future", "mistralai/Mistral-7B")).status, 202);
  EXPECT_EQ(Send(Event("discussion", "google/gemma-7b-it")).status, 204);
  EXPECT_EQ(Send(Event("discussion.comment", "google/gemma-7b-it")).status, 204);
  EXPECT_EQ(Send(Event("repo.content", "untracked/model")).status, 204);
  std::string dataset = Event("repo.content", "google/gemma-7b-it");
  dataset.replace(dataset.find("\"model\""), 7, "\"dataset\"");
  EXPECT_EQ(Send(dataset).status, 204);
  EXPECT_EQ(control_.hints().size(), 4u);  // three repo events, and the untracked one asked
  // A move hints the old name and the new one.
  EXPECT_EQ(Send(Event("repo", "old-org/model",
                       R"(, "movedTo": {"name": "new-org/model", "owner": {"id": "1"}})"))
                .status,
            202);
  auto hints = control_.hints();
  ASSERT_EQ(hints.size(), 6u);
  EXPECT_EQ(hints[4].first, "old-org/model");
  EXPECT_EQ(hints[5].first, "new-org/model");
}

// The reply and /metrics say what the scheduler did with the hint (its webhook share and gap);
// a move naming two repos is told by the one polled soonest.
TEST_F(HubWebhookTest, TheReplySaysWhetherThePollWasDeferredOrDropped) {
  deps_.hub_webhook_secret = kSecret;
  StartServer();
  HttpResponse deferred = Send(Event("repo.content", "deferred/model"));
  ASSERT_EQ(deferred.status, 202) << deferred.body;
  EXPECT_EQ(deferred.json()["poll"], "deferred");
  HttpResponse dropped = Send(Event("repo.content", "dropped/model"));
  ASSERT_EQ(dropped.status, 202) << dropped.body;
  EXPECT_EQ(dropped.json()["poll"], "dropped");
  EXPECT_EQ(Send(Event("repo", "dropped/old",
                       R"(, "movedTo": {"name": "deferred/new", "owner": {"id": "1"}})"))
                .json()["poll"],
            "deferred");
  const std::string metrics = Get("/metrics").body;
  EXPECT_NE(metrics.find("hubwatch_hub_webhooks_total{outcome=\"deferred\"} 2"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("hubwatch_hub_webhooks_total{outcome=\"dropped\"} 1"), std::string::npos)
      << metrics;
}

TEST_F(HubWebhookTest, BadBodiesAre400AndHostileNamesNeverReachTheScheduler) {
  deps_.hub_webhook_secret = kSecret;
  StartServer();
  EXPECT_EQ(Send("{not json").status, 400);
  EXPECT_EQ(Send("[1, 2]").status, 400);
  EXPECT_EQ(Send(R"({"repo": {"name": "a/b"}})").status, 400);  // no scope
  EXPECT_EQ(Send(R"({"event": {"scope": "repo.content"}, "repo": {}})").status, 400);
  EXPECT_EQ(Send(Event("repo.content", "../../etc/passwd")).status, 204);
  EXPECT_EQ(Send(Event("repo.content", "a/b\\u001b[31m")).status, 204);
  EXPECT_TRUE(control_.hints().empty());
}

TEST_F(HubWebhookTest, ABurstBeyondTheLimitIsTold429) {
  deps_.hub_webhook_secret = kSecret;
  StartServer();
  const std::string body = Event("discussion", "google/gemma-7b-it");
  int limited = 0, accepted = 0;
  for (int i = 0; i < 260; ++i) {
    const HttpResponse r = Send(body);
    if (r.status == 429) {
      ++limited;
      EXPECT_EQ(r.header("retry-after"), "1");
    } else if (r.status == 204) {
      ++accepted;
    }
  }
  // The burst is 200; the clock is the test's, so no tokens come back meanwhile.
  EXPECT_EQ(accepted, 200);
  EXPECT_EQ(limited, 60);
}

}  // namespace
}  // namespace hubwatch::api::testing
