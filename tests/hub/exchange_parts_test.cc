// The pure parts of an exchange and of the client's answers: rate-limit buckets, revalidation
// through the ETag cache, resolve answers, numeric header values.

#include <gtest/gtest.h>

#include "tracker/hub/etag_revalidation.h"
#include "tracker/hub/rate_buckets.h"
#include "tracker/hub/resolve_answer.h"

namespace hubwatch::hub {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(RateBuckets, BucketOfSplitsTheApiFromTheResolvers) {
  EXPECT_EQ(BucketOf("https://huggingface.co/api/models/a/b/refs"), "api");
  EXPECT_EQ(BucketOf("https://huggingface.co/api/resolve-cache/models/a/b/c/f"), "resolvers");
  EXPECT_EQ(BucketOf("https://huggingface.co/a/b/resolve/main/config.json"), "resolvers");
}

TEST(RateBuckets, ExhaustedBucketPausesUntilItsResetCappedAtTheMaximum) {
  RateBuckets buckets;
  const SteadyTime now{seconds(1000)};
  HttpHeaders headers;
  headers.Add("RateLimit", "\"api\";r=0;t=55");
  headers.Add("RateLimit-Policy", "\"fixed window\";\"api\";q=500;w=300");
  const RateSignal signal =
      buckets.Observe(headers, "https://hf.co/api/models/a/b", now, WallTime{}, seconds(30));
  EXPECT_EQ(signal.server_wait, milliseconds(56'000));
  EXPECT_EQ(signal.paused_bucket, "api");
  EXPECT_EQ(signal.pause, seconds(30));
  EXPECT_EQ(buckets.PausedUntil("api", now), now + seconds(30));
  EXPECT_FALSE(buckets.PausedUntil("api", now + seconds(30)).has_value());
  EXPECT_FALSE(buckets.PausedUntil("resolvers", now).has_value());
  const BucketStatus status = buckets.Status("api", now);
  EXPECT_EQ(status.remaining, 0);
  EXPECT_EQ(status.quota, 500);
  EXPECT_EQ(status.window_seconds, 300);
  EXPECT_EQ(status.paused_until, now + seconds(30));
}

TEST(RateBuckets, RetryAfterCountsOnlyWithoutAnExhaustedBucket) {
  RateBuckets buckets;
  HttpHeaders headers;
  headers.Add("RateLimit", "\"resolvers\";r=7;t=10");
  headers.Add("Retry-After", "12");
  const RateSignal signal = buckets.Observe(headers, "https://hf.co/a/b/resolve/main/f",
                                            SteadyTime{}, WallTime{}, seconds(300));
  EXPECT_EQ(signal.server_wait, milliseconds(12'000));
  EXPECT_TRUE(signal.paused_bucket.empty());
  EXPECT_EQ(buckets.Status("resolvers", SteadyTime{}).remaining, 7);
  EXPECT_FALSE(buckets.Status("resolvers", SteadyTime{}).paused_until.has_value());
}

TEST(EtagRevalidation, KeepsTheResourceNotTheResponse) {
  HttpResponse response;
  response.status = 200;
  response.body = "{\"a\": 1}";
  response.headers.Add("ETag", "\"v1\"");
  response.headers.Add("Content-Type", "application/json");
  response.headers.Add("Date", "today");
  response.headers.Add("Set-Cookie", "s=1");
  HttpHeaders identity;
  identity.Add("X-Repo-Commit", "abc");
  std::optional<CachedResponse> entry = CacheEntryFor(response, identity);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->etag, "\"v1\"");
  EXPECT_EQ(entry->body, response.body);
  EXPECT_FALSE(entry->headers.Has("Date"));
  EXPECT_FALSE(entry->headers.Has("Set-Cookie"));
  EXPECT_EQ(entry->headers.Get("X-Repo-Commit"), "abc");

  const HttpResponse replay = CachedOk(*entry, "https://hf.co/x");
  EXPECT_EQ(replay.status, 200);
  EXPECT_EQ(replay.url, "https://hf.co/x");
  EXPECT_EQ(replay.body, response.body);
  EXPECT_EQ(CachedIdentity(*entry, HttpHeaders()).Get("X-Repo-Commit"), "abc");
  HttpHeaders fresh;
  fresh.Add("X-Repo-Commit", "def");
  EXPECT_EQ(CachedIdentity(*entry, fresh).Get("X-Repo-Commit"), "def");
}

TEST(EtagRevalidation, NoValidatorOrBrokenJsonIsNotKept) {
  HttpResponse response;
  response.status = 200;
  response.body = "{\"a\": ";
  EXPECT_FALSE(CacheEntryFor(response, HttpHeaders()).has_value());
  response.headers.Add("ETag", "\"v1\"");
  response.headers.Add("Content-Type", "application/json");
  EXPECT_FALSE(CacheEntryFor(response, HttpHeaders()).has_value());
}

TEST(ResolveAnswer, IdentityFromTheHubsHeaders) {
  ExchangeResponse exchange;
  exchange.final_url = "https://hf.co/a/b/resolve/main/model.safetensors";
  exchange.response.status = 302;
  exchange.response.headers.Add("Location", "https://cdn.example/blob");
  exchange.identity.Add("X-Repo-Commit", "abc");
  exchange.identity.Add("X-Linked-Etag", "W/\"sha\"");
  exchange.identity.Add("X-Linked-Size", "123");
  HubResult<ResolvedFile> file = ResolvedFileOf(exchange, exchange.final_url);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->commit, "abc");
  EXPECT_EQ(file->etag, "sha");
  EXPECT_EQ(file->size, 123u);
  EXPECT_TRUE(file->is_lfs);
  EXPECT_EQ(file->location, "https://cdn.example/blob");

  exchange.identity.Set("X-Linked-Size", "12x");
  EXPECT_FALSE(ResolvedFileOf(exchange, exchange.final_url).ok());
  exchange.identity = HttpHeaders();
  EXPECT_FALSE(ResolvedFileOf(exchange, exchange.final_url).ok());
}

TEST(ResolveAnswer, ContentMustMatchItsLinkedSize) {
  ExchangeResponse exchange;
  const std::string url = "https://hf.co/a/b/resolve/main/config.json";
  exchange.final_url = url;
  exchange.response.status = 200;
  exchange.response.body = "{}";
  exchange.identity.Add("X-Repo-Commit", "abc");
  exchange.identity.Add("X-Linked-Size", "2");
  HubResult<FileContent> content = FileContentOf(exchange, url, 100);
  ASSERT_TRUE(content.ok());
  EXPECT_EQ(content->body, "{}");
  EXPECT_FALSE(content->file.is_lfs);

  exchange.identity.Set("X-Linked-Size", "3");
  EXPECT_FALSE(FileContentOf(exchange, url, 100).ok());
  exchange.response.body_limit_hit = true;
  EXPECT_FALSE(FileContentOf(exchange, url, 100).ok());
}

TEST(HttpTypes, HeaderNumbersAreDigitsOnly) {
  EXPECT_EQ(ParseHeaderNumber("0"), 0u);
  EXPECT_EQ(ParseHeaderNumber("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(ParseHeaderNumber("").has_value());
  EXPECT_FALSE(ParseHeaderNumber("-1").has_value());
  EXPECT_FALSE(ParseHeaderNumber(" 1").has_value());
  EXPECT_FALSE(ParseHeaderNumber("18446744073709551616").has_value());
}

}  // namespace
}  // namespace hubwatch::hub
