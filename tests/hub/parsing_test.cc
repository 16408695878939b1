// Pure parsers: URLs (RFC 3986 §5.4 examples), Link, RateLimit, Retry-After, repo ids, backoff.

#include <gtest/gtest.h>

#include "tracker/hub/backoff.h"
#include "tracker/hub/link_header.h"
#include "tracker/hub/rate_limit.h"
#include "tracker/hub/repo_id.h"
#include "tracker/hub/url.h"

namespace hubwatch::hub {
namespace {

TEST(Url, ResolvesTheRfc3986Examples) {
  const char* base = "http://a/b/c/d;p?q";
  const std::pair<const char*, const char*> cases[] = {
      {"g:h", "g:h"},
      {"g", "http://a/b/c/g"},
      {"./g", "http://a/b/c/g"},
      {"g/", "http://a/b/c/g/"},
      {"/g", "http://a/g"},
      {"//g", "http://g"},
      {"?y", "http://a/b/c/d;p?y"},
      {"g?y", "http://a/b/c/g?y"},
      {"#s", "http://a/b/c/d;p?q#s"},
      {"g#s", "http://a/b/c/g#s"},
      {";x", "http://a/b/c/;x"},
      {"", "http://a/b/c/d;p?q"},
      {".", "http://a/b/c/"},
      {"..", "http://a/b/"},
      {"../g", "http://a/b/g"},
      {"../..", "http://a/"},
      {"../../g", "http://a/g"},
      {"../../../g", "http://a/g"},
      {"/./g", "http://a/g"},
      {"/../g", "http://a/g"},
      {"g.", "http://a/b/c/g."},
      {"..g", "http://a/b/c/..g"},
      {"./../g", "http://a/b/g"},
      {"g/./h", "http://a/b/c/g/h"},
      {"g/../h", "http://a/b/c/h"},
      {"g;x=1/../y", "http://a/b/c/y"},
      {"http:g", "http:g"},
  };
  for (const auto& [ref, want] : cases) {
    EXPECT_EQ(ResolveReference(base, ref).value_or("<none>"), want) << ref;
  }
}

TEST(Url, ResolvesHubStyleLinks) {
  const std::string page = "http://127.0.0.1:9/api/models/a/b/commits/main?limit=50";
  EXPECT_EQ(*ResolveReference(page, "/api/models/a/b/commits/main?p=1&limit=50"),
            "http://127.0.0.1:9/api/models/a/b/commits/main?p=1&limit=50");
  EXPECT_EQ(*ResolveReference(page, "main?p=2"),
            "http://127.0.0.1:9/api/models/a/b/commits/main?p=2");
  EXPECT_EQ(*ResolveReference(page, "http://127.0.0.2:8/x?sig=1"), "http://127.0.0.2:8/x?sig=1");
  EXPECT_FALSE(ResolveReference("/relative/base", "x").has_value());
}

TEST(Url, OriginsAndEncoding) {
  EXPECT_EQ(OriginOf("HTTP://Example.COM:80/a?b"), "http://example.com:80");
  EXPECT_NE(OriginOf("http://127.0.0.1:5/a"), OriginOf("http://127.0.0.2:5/a"));
  EXPECT_EQ(OriginOf("/just/a/path"), "");
  EXPECT_EQ(EncodeComponent("refs/pr/1"), "refs%2Fpr%2F1");
  EXPECT_EQ(EncodeComponent("a b&c"), "a%20b%26c");
  EXPECT_EQ(EncodePath("dir/file name.json"), "dir/file%20name.json");
}

TEST(LinkHeader, FindsNextAmongSeveral) {
  EXPECT_EQ(FindLinkTarget("<https://h/api?p=1>; rel=\"next\"", "next").value_or(""),
            "https://h/api?p=1");
  EXPECT_EQ(FindLinkTarget("</a?cursor=x,y>; rel=\"prev\", </b?p=2>; rel=\"next last\"", "next")
                .value_or(""),
            "/b?p=2");
  EXPECT_EQ(FindLinkTarget("<https://x/v1>; rel=\"xet-auth\", <https://y>; rel=next", "next")
                .value_or(""),
            "https://y");
  EXPECT_FALSE(FindLinkTarget("<https://h/a>; rel=\"prev\"", "next").has_value());
  EXPECT_FALSE(FindLinkTarget("garbage <unterminated", "next").has_value());
  EXPECT_FALSE(FindLinkTarget("", "next").has_value());
}

TEST(RateLimit, ParsesHeadersFromTheDraft) {
  auto state = ParseRateLimit("\"api\";r=0;t=55");
  ASSERT_TRUE(state);
  EXPECT_EQ(state->bucket, "api");
  EXPECT_EQ(state->remaining, 0);
  EXPECT_EQ(state->reset_seconds, 55);
  EXPECT_EQ(ParseRateLimit("\"resolvers\";r=4999;t=241")->remaining, 4999);
  EXPECT_FALSE(ParseRateLimit("\"api\";r=abc;t=1"));
  EXPECT_FALSE(ParseRateLimit("\"api\";t=1"));
  EXPECT_FALSE(ParseRateLimit("\"api\";r=-1;t=1"));

  auto policy = ParseRateLimitPolicy("\"fixed window\";\"api\";q=500;w=300");
  ASSERT_TRUE(policy);
  EXPECT_EQ(policy->kind, "fixed window");
  EXPECT_EQ(policy->bucket, "api");
  EXPECT_EQ(policy->quota, 500);
  EXPECT_EQ(policy->window_seconds, 300);
  EXPECT_FALSE(ParseRateLimitPolicy("\"api\";q=500;w=0"));
}

TEST(RetryAfter, SecondsAndHttpDates) {
  const WallTime now = *ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(ParseRetryAfter("120", now)->count(), 120);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:50:37 GMT", now)->count(), 60);
  EXPECT_EQ(ParseRetryAfter("Sunday, 06-Nov-94 08:51:37 GMT", now)->count(), 120);
  EXPECT_EQ(ParseRetryAfter("Sun Nov  6 08:49:47 1994", now)->count(), 10);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:00:00 GMT", now)->count(), 0);  // past
  EXPECT_FALSE(ParseRetryAfter("soon", now));
  EXPECT_FALSE(ParseRetryAfter("99999999999999999999999", now));
  EXPECT_FALSE(ParseRetryAfter("Sun, 06 Foo 1994 08:49:37 GMT", now));
}

TEST(Backoff, FullJitterStaysUnderTheCappedExponential) {
  RetryPolicy policy;
  policy.base = std::chrono::milliseconds(1000);
  policy.cap = std::chrono::milliseconds(8000);
  SeededRandom random(7);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int64_t ceiling = std::min<int64_t>(8000, 1000ll << attempt);
    int64_t max_seen = 0;
    for (int i = 0; i < 2000; ++i) {
      const int64_t d = FullJitterDelay(policy, attempt, random).count();
      ASSERT_GE(d, 0);
      ASSERT_LE(d, ceiling);
      max_seen = std::max(max_seen, d);
    }
    EXPECT_GT(max_seen, ceiling * 9 / 10) << "jitter should reach near the ceiling";
  }
}

TEST(Backoff, SameSeedSameScheduleDifferentSeedDisperses) {
  RetryPolicy policy;
  SeededRandom a(1), b(1), c(2);
  std::vector<int64_t> sa, sb, sc;
  for (int i = 0; i < 5; ++i) {
    sa.push_back(FullJitterDelay(policy, i, a).count());
    sb.push_back(FullJitterDelay(policy, i, b).count());
    sc.push_back(FullJitterDelay(policy, i, c).count());
  }
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, sc);
}

TEST(Backoff, RetryableStatuses) {
  for (int s : {408, 429, 500, 502, 503, 504}) EXPECT_TRUE(IsRetryableStatus(s)) << s;
  for (int s : {200, 304, 400, 401, 403, 404, 416}) EXPECT_FALSE(IsRetryableStatus(s)) << s;
}

TEST(RepoId, FollowsHubRules) {
  for (const char* ok : {"gpt2", "google/gemma-2-9b-it", "a-.b/_x_", "meta-llama/Llama-3.1-8B"}) {
    EXPECT_TRUE(ValidateRepoId(ok).ok()) << ok;
  }
  for (const char* bad :
       {"", "a/b/c", "-a", "a-", "a/-b", "a--b", "a..b", "x/y.git", "../etc", "a b",
        "ns/"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaa"}) {
    EXPECT_FALSE(ValidateRepoId(bad).ok()) << bad;
  }
  EXPECT_TRUE(IsCommitId("4d6c61da057c45bfc4dc4d3bfa5a691ecb9ce0cf"));
  EXPECT_FALSE(IsCommitId("4D6C61DA057C45BFC4DC4D3BFA5A691ECB9CE0CF"));
}

}  // namespace
}  // namespace hubwatch::hub

// Untrusted input: mutated real bodies and random bytes never crash a parser (run under
// ASan/UBSan in CI's sanitizer build); they parse or give a typed error.
#include "tracker/hub/hub_json.h"

namespace hubwatch::hub {
namespace {

TEST(UntrustedInput, MutatedBodiesGiveValuesOrTypedErrors) {
  const std::vector<std::string> seeds = {
      R"({"branches":[{"name":"main","ref":"refs/heads/main","targetCommit":"abc"}],"converts":[],"tags":[]})",
      R"([{"id":"a","title":"t","message":"","authors":[{"user":"u"}],"date":"2024-01-01T00:00:00.000Z"}])",
      R"([{"type":"file","oid":"x","size":1,"path":"a","lfs":{"oid":"y","size":1,"pointerSize":1}}])",
      R"({"_id":"1","id":"a/b","gated":"manual","siblings":[{"rfilename":"c"}],"safetensors":{"parameters":{"BF16":1},"total":1}})",
      R"([{"id":"a/b","sha":"s","lastModified":"d","gated":false}])",
      "<a/b>; rel=\"next\"",
      "\"api\";r=0;t=55",
      "Sun, 06 Nov 1994 08:49:37 GMT"};
  SeededRandom random(2024);
  int typed_errors = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string body = seeds[random.NextU64() % seeds.size()];
    const int edits = 1 + static_cast<int>(random.NextU64() % 6);
    for (int e = 0; e < edits && !body.empty(); ++e) {
      const size_t at = random.NextU64() % body.size();
      switch (random.NextU64() % 4) {
        case 0:
          body[at] = static_cast<char>(random.NextU64() & 0xff);
          break;
        case 1:
          body.erase(at, 1 + random.NextU64() % 8);
          break;
        case 2:
          body.insert(at, std::string(1, "{}[],:\"0-9e"[random.NextU64() % 11]));
          break;
        case 3:
          body.resize(at);
          break;
      }
    }
    const std::string url = "http://127.0.0.1/x";
    typed_errors += !ParseRefsJson(body, url).ok();
    typed_errors += !ParseCommitsJson(body, url).ok();
    typed_errors += !ParseTreeJson(body, url).ok();
    typed_errors += !ParseModelInfoJson(body, url).ok();
    typed_errors += !ParseModelListJson(body, url).ok();
    (void)FindLinkTarget(body, "next");
    (void)ParseRateLimit(body);
    (void)ParseRateLimitPolicy(body);
    (void)ParseRetryAfter(body, WallTime{});
    (void)ResolveReference("http://127.0.0.1/a/b", body);
  }
  EXPECT_GT(typed_errors, 3000);
  auto error = ParseCommitsJson("[{\"id\": 5}]", "http://127.0.0.1/c");
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.error().kind, HubErrorKind::kProtocol);
  EXPECT_NE(error.error().detail.find("\"id\" is not a string"), std::string::npos);
}

TEST(UntrustedInput, DeeplyNestedBodiesAreProtocolErrorsBeforeParsing) {
  const std::string deep = "{\"branches\": " + std::string(1 << 20, '[') + "}";
  auto refs = ParseRefsJson(deep, "http://127.0.0.1/r");
  ASSERT_FALSE(refs.ok());
  EXPECT_EQ(refs.error().kind, HubErrorKind::kProtocol);
  EXPECT_NE(refs.error().detail.find("deeper than 64 levels"), std::string::npos)
      << refs.error().detail;
}

}  // namespace
}  // namespace hubwatch::hub
