// JudgeAttempt and SignedRequest alone: an attempt's verdict against a clock that stands still
// and jitter that is always 0, and the signed request of one delivery.

#include <gtest/gtest.h>

#include "daemon/subscriptions/attempt_verdict.h"
#include "daemon/subscriptions/signature.h"
#include "daemon/subscriptions/webhook_request.h"

namespace hubwatch::subscriptions {
namespace {

constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr int64_t kNow = 1'790'000'000;

class StillClock final : public Clock {
 public:
  SteadyTime Now() const override { return SteadyTime{}; }
  WallTime WallNow() const override { return std::chrono::system_clock::from_time_t(kNow); }
};

class ZeroRandom final : public Random {
 public:
  uint64_t NextU64() override { return 0; }
};

store::Delivery Row() {
  return {.outbox_id = 7,
          .advisory_id = "x_HUBWATCH-a1",
          .target = "subscription:3",
          .subscription_id = 3,
          .url = "https://hooks.example/in",
          .secret = kSecret,
          .body = "{\"id\":\"x_HUBWATCH-a1\"}",
          .attempts = 2,
          .created_at = kNow - 100,
          .next_attempt_at = kNow};
}

hub::TransportOutcome Answer(int status, const std::string& retry_after = "") {
  hub::TransportOutcome o;
  o.response.status = status;
  if (!retry_after.empty()) o.response.headers.Add("Retry-After", retry_after);
  return o;
}

AttemptReport Judge(const hub::TransportOutcome& outcome, int64_t retry_for_s = 3600) {
  StillClock clock;
  ZeroRandom random;
  return JudgeAttempt(Row(), "msg_1", outcome, {.retry_for_s = retry_for_s}, clock, random);
}

TEST(AttemptVerdict, TwoHundredsAreDeliveredAndFourTenDisables) {
  const AttemptReport ok = Judge(Answer(204));
  EXPECT_EQ(ok.result, AttemptReport::Result::kDelivered);
  EXPECT_EQ(ok.status, 204);
  EXPECT_EQ(ok.attempt, 3);
  EXPECT_EQ(ok.outbox_id, 7);
  EXPECT_EQ(ok.subscription_id, 3);
  EXPECT_EQ(ok.webhook_id, "msg_1");
  const AttemptReport gone = Judge(Answer(410));
  EXPECT_EQ(gone.result, AttemptReport::Result::kDisabled);
  EXPECT_EQ(gone.error, "the receiver answered 410 Gone");
}

TEST(AttemptVerdict, OthersRetryAfterAtLeastTheMinimumOrRetryAfter) {
  const AttemptReport plain = Judge(Answer(500));
  EXPECT_EQ(plain.result, AttemptReport::Result::kRetry);
  EXPECT_EQ(plain.error, "HTTP 500");
  EXPECT_EQ(plain.next_attempt_at, kNow + 1);  // no jitter: min_delay
  const AttemptReport busy = Judge(Answer(503, "120"));
  EXPECT_EQ(busy.next_attempt_at, kNow + 120);
  const AttemptReport ignored = Judge(Answer(500, "120"));  // Retry-After only on 429/503
  EXPECT_EQ(ignored.next_attempt_at, kNow + 1);
}

TEST(AttemptVerdict, GivesUpOnceTheNextTryIsPastRetryFor) {
  hub::TransportOutcome refused;
  refused.error = hub::TransportError{hub::TransportErrorKind::kConnect, 7, "refused"};
  const AttemptReport late = Judge(refused, 100);
  EXPECT_EQ(late.result, AttemptReport::Result::kFailed);
  EXPECT_EQ(late.error, "refused (gave up after 3 attempts)");
  EXPECT_FALSE(late.status.has_value());
}

TEST(WebhookRequest, IsSignedWithTheSubscriptionSecret) {
  Result<WebhookRequest> r = SignedRequest(Row(), "msg_1", kNow, {.user_agent = "hubwatch/1"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->url, "https://hooks.example/in");
  EXPECT_EQ(r->body, Row().body);
  EXPECT_EQ(r->headers.Get("User-Agent"), "hubwatch/1");
  EXPECT_EQ(r->headers.Get("webhook-id"), "msg_1");
  EXPECT_EQ(r->headers.Get("webhook-timestamp"), std::to_string(kNow));
  EXPECT_TRUE(Verify(kSecret, "msg_1", std::to_string(kNow), Row().body,
                     std::string(*r->headers.Get("webhook-signature")), kNow)
                  .ok());
}

TEST(WebhookRequest, ABadSecretOrAPrivateTargetIsRefused) {
  store::Delivery bad = Row();
  bad.secret = "whsec_!";
  Result<WebhookRequest> r = SignedRequest(bad, "msg_1", kNow, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("refused: the subscription's secret is not valid", 0), 0u);
  EXPECT_EQ(r.error().message.find("whsec_!"), std::string::npos);
  store::Delivery local = Row();
  local.url = "http://127.0.0.1/in";
  r = SignedRequest(local, "msg_1", kNow, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("refused: ", 0), 0u);
  EXPECT_TRUE(SignedRequest(local, "msg_1", kNow, {.allow_private_targets = true}).ok());
}

}  // namespace
}  // namespace hubwatch::subscriptions
