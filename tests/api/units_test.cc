// The API's pure parts, without a server: routing, query strings, times, badges, XML, SSE
// framing and osv.dev query parsing.

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/api/api_context.h"
#include "daemon/api/badge.h"
#include "daemon/api/osv_query.h"
#include "daemon/api/query_params.h"
#include "daemon/api/router.h"
#include "daemon/api/sse.h"
#include "daemon/api/xml_text.h"
#include "tests/api/shields_rules.h"

namespace hubwatch::api {
namespace {

using testing::ShieldsEndpointProblem;

Router TwoRoutes(std::vector<std::string>* seen) {
  Router router;
  router.Add({"GET", "/api/v1/repos/{ns}/{name}/revisions",
              [seen](const HttpRequest&, const PathParams& p, Respond r) {
                seen->push_back(p.at("ns") + "|" + p.at("name"));
                r(HttpReply::Json(200, {{"ok", true}}));
              }});
  router.Add({"DELETE", "/api/v1/repos/{ns}/{name}",
              [](const HttpRequest&, const PathParams&, Respond r) { r(HttpReply{}); }});
  router.Add({"POST", "/api/v1/repos/{ns}/{name}",
              [](const HttpRequest&, const PathParams&, Respond r) { r(HttpReply{}); }});
  return router;
}

HttpReply Dispatch(const Router& router, const std::string& method, const std::string& path,
                   std::string* label = nullptr) {
  HttpRequest request;
  request.method = method;
  request.path = path;
  HttpReply out;
  router.Dispatch(
      request, [&](HttpReply r) { out = std::move(r); }, label);
  return out;
}

TEST(Router, MatchesPlaceholdersPercentDecoded) {
  std::vector<std::string> seen;
  const Router router = TwoRoutes(&seen);
  std::string label;
  EXPECT_EQ(Dispatch(router, "GET", "/api/v1/repos/my%2Dorg/model/revisions", &label).status, 200);
  EXPECT_EQ(label, "/api/v1/repos/{ns}/{name}/revisions");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], "my-org|model");
}

TEST(Router, UnknownPathIs404AndOtherMethodIs405WithAllow) {
  std::vector<std::string> seen;
  const Router router = TwoRoutes(&seen);
  std::string label;
  HttpReply r = Dispatch(router, "GET", "/api/v1/nope", &label);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(label, "unmatched");
  EXPECT_TRUE(nlohmann::json::parse(r.body).contains("error"));
  r = Dispatch(router, "GET", "/api/v1/repos/a/b");
  EXPECT_EQ(r.status, 405);
  ASSERT_EQ(r.headers.size(), 1u);
  EXPECT_EQ(r.headers[0], (std::pair<std::string, std::string>("Allow", "DELETE, POST")));
  // An empty segment does not match a placeholder.
  EXPECT_EQ(Dispatch(router, "GET", "/api/v1/repos//b/revisions").status, 404);
  EXPECT_TRUE(seen.empty());
}

TEST(Router, BadPercentEncodingWhereARouteWouldMatchIs400) {
  std::vector<std::string> seen;
  const Router router = TwoRoutes(&seen);
  std::string label;
  for (const char* path : {"/api/v1/repos/%zz/b/revisions", "/api/v1/repos/a/%4/revisions",
                           "/api/v1/repos/a%00b/c/revisions"}) {
    const HttpReply r = Dispatch(router, "GET", path, &label);
    EXPECT_EQ(r.status, 400) << path;
    EXPECT_EQ(label, "unmatched");
    EXPECT_NE(r.body.find("percent-encoding"), std::string::npos) << r.body;
  }
  // Where no route would match anyway, it stays a 404; the method check is not reached.
  EXPECT_EQ(Dispatch(router, "GET", "/api/v1/%zz/b/revisions").status, 404);
  EXPECT_EQ(Dispatch(router, "DELETE", "/api/v1/repos/%zz/b").status, 400);
  EXPECT_TRUE(seen.empty());
}

TEST(PercentDecode, RejectsBadEscapesAndNul) {
  EXPECT_EQ(PercentDecode("a%20b+c", true), "a b c");
  EXPECT_EQ(PercentDecode("a+b", false), "a+b");
  EXPECT_EQ(PercentDecode("%", false), std::nullopt);
  EXPECT_EQ(PercentDecode("%4", false), std::nullopt);
  EXPECT_EQ(PercentDecode("%G0", false), std::nullopt);
  EXPECT_EQ(PercentDecode("a%00b", false), std::nullopt);
}

TEST(QueryParams, ParsesRepeatsAndCheckedIntegers) {
  auto q = QueryParams::Parse("limit=5&kind=chat_template&kind=config&flag&x=%41");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->Get("kind"), "chat_template");
  EXPECT_EQ(q->Get("flag"), "");
  EXPECT_EQ(q->Get("x"), "A");
  EXPECT_EQ(q->Get("missing"), std::nullopt);
  auto limit = q->Int("limit", 1, 10);
  ASSERT_TRUE(limit.ok());
  EXPECT_EQ(*limit, std::optional<int64_t>(5));
  EXPECT_FALSE(q->Int("limit", 6, 10).ok());
  EXPECT_FALSE(q->Int("kind", 0, 10).ok());
  EXPECT_TRUE(q->Int("missing", 0, 1).ok());
  EXPECT_FALSE(QueryParams::Parse("a=%zz").ok());
}

// A batch runs each distinct query once (issue 28: 1,000 identical queries did the work 1,000
// times); queries differing in any field are distinct, a purl and a name that parse to the same
// query are the same.
TEST(OsvBatch, EachDistinctQueryIsRunOnce) {
  const std::string sha(40, 'a');
  std::vector<OsvQuery> queries;
  for (const char* q :
       {R"({"commit": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})",
        R"({"package": {"name": "org/m"}, "version": "main"})",
        R"({"commit": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})",
        R"({"package": {"purl": "pkg:huggingface/org/m@main"}})",
        R"({"package": {"name": "org/m"}, "version": "v2"})",
        R"({"commit": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "page_token": "10"})"}) {
    Result<OsvQuery> parsed = ParseOsvQuery(nlohmann::json::parse(q), "https://huggingface.co");
    ASSERT_TRUE(parsed.ok()) << q << ": " << parsed.error().message;
    queries.push_back(*parsed);
  }
  EXPECT_EQ(FirstAsked(queries), (std::vector<size_t>{0, 1, 0, 1, 4, 5}));
  std::vector<OsvQuery> thousand(1000, queries[0]);
  const std::vector<size_t> first = FirstAsked(thousand);
  EXPECT_EQ(std::count(first.begin(), first.end(), 0u), 1000);
}

TEST(Badge, PinMessagesCountOnlyAdvisableChanges) {
  Badge b = PinBadge("1a2b3c4d5e6f", {.cosmetic = 4, .behavioral = 2, .breaking = 1}, "");
  EXPECT_EQ(b.message, "3 changes since 1a2b3c4");
  EXPECT_EQ(b.color, "red");
  b = PinBadge("1a2b3c4d5e6f", {.cosmetic = 0, .behavioral = 1, .breaking = 0}, "chat_template");
  EXPECT_EQ(b.message, "1 chat template change since 1a2b3c4");
  EXPECT_EQ(b.color, "orange");
  b = PinBadge("1a2b3c4d5e6f", {.cosmetic = 9, .behavioral = 0, .breaking = 0}, "");
  EXPECT_EQ(b.message, "no changes since pin");
  EXPECT_EQ(b.color, "brightgreen");
}

TEST(Badge, LastChangeMessages) {
  const int64_t now = 1'000'000'000;
  Badge b = LastChangeBadge("chat_template", now - 2 * 86400 - 5, now);
  EXPECT_EQ(b.message, "chat template changed 2 days ago");
  EXPECT_EQ(b.color, "orange");
  b = LastChangeBadge("", now - 40 * 86400, now);
  EXPECT_EQ(b.message, "changed 1 month ago");
  EXPECT_EQ(b.color, "blue");
  b = LastChangeBadge("generation_config", std::nullopt, now);
  EXPECT_EQ(b.message, "no generation config changes");
  EXPECT_EQ(TimeAgo(30), "just now");
  EXPECT_EQ(TimeAgo(61), "1 minute ago");
  EXPECT_EQ(TimeAgo(7200), "2 hours ago");
  EXPECT_EQ(TimeAgo(800 * 86400), "2 years ago");
}

TEST(Badge, ShieldsJsonFollowsTheEndpointRules) {
  for (const Badge& b : {PinBadge("abcdef0123", {}, ""), LastChangeBadge("config", 5, 100000),
                         Badge{"", "x", "", true}}) {
    const nlohmann::json j = BadgeToShieldsJson(b);
    EXPECT_EQ(ShieldsEndpointProblem(j), "") << j.dump();
    EXPECT_GE(j["cacheSeconds"].get<int64_t>(), 300);  // shields' floor
  }
  // The checker itself rejects what shields rejects.
  EXPECT_NE(ShieldsEndpointProblem({{"schemaVersion", 1}, {"label", "a"}, {"message", ""}}), "");
  EXPECT_NE(ShieldsEndpointProblem(
                {{"schemaVersion", 1}, {"label", "a"}, {"message", "b"}, {"link", "x"}}),
            "");
  EXPECT_NE(ShieldsEndpointProblem({{"schemaVersion", 2}, {"label", "a"}, {"message", "b"}}), "");
}

TEST(Badge, SvgEscapesTextAndWidensWithIt) {
  const std::string narrow = RenderBadgeSvg({"hubwatch", "ok", "brightgreen"});
  const std::string wide = RenderBadgeSvg({"hubwatch", "12 changes since 1a2b3c4", "orange"});
  auto width = [](const std::string& svg) {
    const size_t at = svg.find("width=\"") + 7;
    return std::stod(svg.substr(at, svg.find('"', at) - at));
  };
  EXPECT_GT(width(wide), width(narrow) + 50);
  const std::string hostile = RenderBadgeSvg({"<a&b>", "\"x\" \x01", "red"});
  EXPECT_EQ(hostile.find("<a&b>"), std::string::npos);
  EXPECT_NE(hostile.find("&lt;a&amp;b&gt;"), std::string::npos);
  EXPECT_EQ(hostile.find('\x01'), std::string::npos);
  EXPECT_NE(hostile.find("#e05d44"), std::string::npos);
}

TEST(XmlEscape, ShowsBidiControlsAsText) {
  EXPECT_EQ(XmlEscape("v2\xe2\x80\xae" "1v \xe2\x81\xa7x"), "v2\\u202e1v \\u2067x");
}

TEST(XmlEscape, DropsWhatXmlCannotHold) {
  EXPECT_EQ(XmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(XmlEscape(std::string("t\tn\nr\r\x00\x07", 8)), "t\tn\nr\r");
  EXPECT_EQ(XmlEscape("\xff"), "\xEF\xBF\xBD");  // invalid UTF-8 -> U+FFFD
  EXPECT_EQ(XmlEscape("x\xEF\xBF\xBEy"), "xy");  // U+FFFE
  EXPECT_EQ(XmlEscape("\xC3\xA9"), "\xC3\xA9");  // é stays
}

TEST(Sse, EventsCarryTheSeqAsIdAndOneDataLine) {
  store::AdvisoryRecord a;
  a.id = "x_HUBWATCH-0123456789abcdef";
  a.seq = 42;
  a.repo = "ns/name";
  a.kind = "chat_template";
  a.osv = {{"summary", "line one\nline two"}};
  const std::string e = SseEvent(a);
  EXPECT_EQ(e.rfind("id: 42\nevent: advisory\ndata: {", 0), 0u) << e;
  EXPECT_EQ(e.substr(e.size() - 2), "\n\n");
  EXPECT_EQ(std::count(e.begin(), e.end(), '\n'), 4);  // the summary's newline is escaped
  EXPECT_EQ(ParseEventId(" 17 "), 17);
  EXPECT_EQ(ParseEventId("17a"), std::nullopt);
  EXPECT_EQ(ParseEventId("-1"), std::nullopt);
  EXPECT_EQ(ParseEventId(""), std::nullopt);
  EXPECT_EQ(SseStart(3000).rfind("retry: 3000\n", 0), 0u);
}

constexpr const char kHub[] = "https://huggingface.co";

Result<OsvQuery> ParseQ(const char* json) {
  return ParseOsvQuery(nlohmann::json::parse(json), kHub);
}

TEST(OsvQuery, AcceptsTheOsvDevShapes) {
  const std::string sha = "2d5d595edaf58f3862d18e382e4f8ba1851e6247";
  auto q = ParseQ(R"({"commit": "2D5D595EDAF58F3862D18E382E4F8BA1851E6247"})");
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_EQ(q->commit, sha);
  EXPECT_EQ(q->repo, "");
  q = ParseQ(R"({"package": {"name": "ns/name"}, "version": "main", "page_token": "12"})");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->repo, "ns/name");
  EXPECT_EQ(q->version, "main");
  EXPECT_EQ(q->after_seq, 12);
  q = ParseQ(R"({"package": {"purl": "pkg:huggingface/ns/name@abcdef1?repository_url=x"}})");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->repo, "ns/name");
  EXPECT_EQ(q->version, "abcdef1");
  q = ParseQ(R"({"package": {"name": "https://huggingface.co/ns/name.git", "ecosystem": "GIT"},
                 "commit": "2d5d595edaf58f3862d18e382e4f8ba1851e6247"})");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->repo, "ns/name");
  EXPECT_FALSE(q->matches_nothing);
  for (const char* none :
       {R"({"package": {"name": "jinja2", "ecosystem": "PyPI"}})",
        R"({"package": {"purl": "pkg:pypi/jinja2@2.0"}})",
        R"({"package": {"name": "https://github.com/a/b", "ecosystem": "GIT"}})"}) {
    q = ParseQ(none);
    ASSERT_TRUE(q.ok()) << none;
    EXPECT_TRUE(q->matches_nothing) << none;
  }
}

TEST(OsvQuery, RejectsWhatOsvDevRejects) {
  for (const char* bad : {
           R"([])",
           R"({})",
           R"({"commit": "abc"})",
           R"({"commit": 5})",
           R"({"version": "main"})",
           R"({"package": {"name": "ns/name"}, "commit": "2d5d595edaf58f3862d18e382e4f8ba1851e6247",
               "version": "main"})",
           R"({"package": {"purl": "pkg:huggingface/ns/name@abcdef1"}, "version": "abcdef1"})",
           R"({"package": {"purl": "huggingface/ns/name"}})",
           R"({"package": {"name": "ns/na--me"}})",
           R"({"package": {"name": "ns/name"}, "page_token": "x"})",
           R"({"package": "ns/name"})",
       }) {
    EXPECT_FALSE(ParseQ(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace hubwatch::api
