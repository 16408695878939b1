#include "daemon/subscriptions/signature.h"

#include <gtest/gtest.h>

#include <set>

namespace hubwatch::subscriptions {
namespace {

// The vector of the Standard Webhooks reference library (libraries/python/tests/
// test_webhooks.py), recomputed with Python's hmac.
constexpr char kSecret[] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr char kId[] = "msg_p5jXN8AQM9LWM0D4loKWxJek";
constexpr int64_t kTimestamp = 1614265330;
constexpr char kBody[] = "{\"test\": 2432232314}";
constexpr char kSignature[] = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

TEST(Signature, MatchesTheStandardWebhooksVector) {
  Result<std::string> key = ParseSecret(kSecret);
  ASSERT_TRUE(key.ok()) << key.error().message;
  EXPECT_EQ(key->size(), 24u);
  EXPECT_EQ(Sign(*key, kId, kTimestamp, kBody), kSignature);
}

TEST(Signature, VerifyAcceptsAnyMatchingEntryAndRejectsTampering) {
  const std::string ts = std::to_string(kTimestamp);
  EXPECT_TRUE(Verify(kSecret, kId, ts, kBody, kSignature, kTimestamp).ok());
  // A space-separated list (key rotation): one good entry suffices.
  EXPECT_TRUE(
      Verify(kSecret, kId, ts, kBody, std::string("v1,AAAA ") + kSignature, kTimestamp).ok());
  EXPECT_FALSE(Verify(kSecret, kId, ts, "{\"test\": 2432232315}", kSignature, kTimestamp).ok());
  EXPECT_FALSE(Verify(kSecret, "msg_other", ts, kBody, kSignature, kTimestamp).ok());
  EXPECT_FALSE(
      Verify(kSecret, kId, std::to_string(kTimestamp + 1), kBody, kSignature, kTimestamp).ok());
  EXPECT_FALSE(Verify(kSecret, kId, ts, kBody, "v1,", kTimestamp).ok());
  EXPECT_FALSE(Verify(kSecret, kId, ts, kBody, "", kTimestamp).ok());
}

TEST(Signature, VerifyChecksTheTimestampTolerance) {
  const std::string ts = std::to_string(kTimestamp);
  EXPECT_TRUE(Verify(kSecret, kId, ts, kBody, kSignature, kTimestamp + 300).ok());
  EXPECT_TRUE(Verify(kSecret, kId, ts, kBody, kSignature, kTimestamp - 300).ok());
  EXPECT_FALSE(Verify(kSecret, kId, ts, kBody, kSignature, kTimestamp + 301).ok());
  EXPECT_FALSE(Verify(kSecret, kId, ts, kBody, kSignature, kTimestamp - 301).ok());
  EXPECT_FALSE(Verify(kSecret, kId, "16142653x0", kBody, kSignature, kTimestamp).ok());
  EXPECT_FALSE(Verify(kSecret, kId, "", kBody, kSignature, kTimestamp).ok());
}

TEST(Signature, ParseSecretRejectsMalformedSecretsWithoutEchoingThem) {
  for (const std::string& bad : {
           std::string("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),         // no prefix
           std::string("whsec_"),                                   // empty
           std::string("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS"),    // not a multiple of 4
           std::string("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa!w"),   // not base64
           std::string("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2La"),       // 18 bytes
           std::string("whsec_") + std::string(88, 'A'),            // 66 bytes
           std::string("whsec_MfKQ9r8GKYqr TwjUPD8ILPZIo2LaLaSw"),  // a space
       }) {
    Result<std::string> key = ParseSecret(bad);
    ASSERT_FALSE(key.ok()) << bad;
    if (bad.size() > 12) {
      EXPECT_EQ(key.error().message.find(bad.substr(6, 8)), std::string::npos)
          << key.error().message;
    }
  }
}

TEST(Signature, GeneratedSecretsParseAndDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 20; ++i) {
    Result<std::string> s = GenerateSecret();
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(s->starts_with("whsec_"));
    Result<std::string> key = ParseSecret(*s);
    ASSERT_TRUE(key.ok()) << key.error().message;
    EXPECT_EQ(key->size(), 32u);
    seen.insert(*s);
  }
  EXPECT_EQ(seen.size(), 20u);
}

TEST(Signature, Base64RoundTripsAndIsStrict) {
  for (const std::string& s :
       std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
    Result<std::string> back = Base64Decode(Base64Encode(s));
    ASSERT_TRUE(back.ok()) << s;
    EXPECT_EQ(*back, s);
  }
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");  // RFC 4648 §10
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_FALSE(Base64Decode("Zm8").ok());
  EXPECT_FALSE(Base64Decode("Z=8=").ok());
  EXPECT_FALSE(Base64Decode("Zm8=Zm8=").ok());
  EXPECT_FALSE(Base64Decode("Z===").ok());
}

TEST(Signature, WebhookIdIsStablePerAdvisoryAndTarget) {
  const std::string a = WebhookId("x_HUBWATCH-1", "subscription:1");
  EXPECT_EQ(a, WebhookId("x_HUBWATCH-1", "subscription:1"));
  EXPECT_NE(a, WebhookId("x_HUBWATCH-1", "subscription:2"));
  EXPECT_NE(a, WebhookId("x_HUBWATCH-2", "subscription:1"));
  EXPECT_TRUE(a.starts_with("msg_"));
  EXPECT_EQ(a.size(), 4u + 32u);
  EXPECT_EQ(a.find('.'), std::string::npos);
}

}  // namespace
}  // namespace hubwatch::subscriptions
