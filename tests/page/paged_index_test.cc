// The lists that stay small (issue 33): over HTTP, with thousands of repos added to the page
// fixture store in one transaction ($HUBWATCH_PAGED_REPOS of them, 3,000 unless set), every
// page of the index, /index.json, /changes and GET /api/v1/repos holds at most 100 rows and
// 256 KB, walking their cursors visits every repo (and change) exactly once while repos are
// added between pages, and a bad cursor, time or term is a 400 saying which.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "daemon/page/href.h"
#include "tests/api/api_env.h"
#include "tests/page/page_env.h"
#include "tests/store/bulk_repos.h"

namespace hubwatch::page::testing {
namespace {

using api::testing::HttpResponse;
using store::testing::BulkId;
using store::testing::FillRepos;

constexpr size_t kMaxBody = 256 * 1024;

int BulkRepos() {
  const char* n = std::getenv("HUBWATCH_PAGED_REPOS");
  return n && std::atoi(n) > 0 ? std::atoi(n) : 3000;
}

size_t Count(const std::string& body, const std::string& needle) {
  size_t n = 0;
  for (size_t at = body.find(needle); at != std::string::npos; at = body.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The href of the link whose text is `text` ("" when there is none), its &amp; read back.
std::string LinkTo(const std::string& body, const std::string& text) {
  const size_t end = body.find("\">" + text + "</a>");
  if (end == std::string::npos) return "";
  const size_t start = body.rfind("href=\"", end);
  std::string href = body.substr(start + 6, end - start - 6);
  for (size_t at = href.find("&amp;"); at != std::string::npos; at = href.find("&amp;", at + 1)) {
    href.replace(at, 5, "&");
  }
  return href;
}

// The model links of an index page's table, in order.
std::vector<std::string> ModelRows(const std::string& body) {
  std::vector<std::string> out;
  const std::string mark = "<th scope=\"row\"><a href=\"/models/";
  for (size_t at = body.find(mark); at != std::string::npos; at = body.find(mark, at + 1)) {
    const size_t start = at + mark.size();
    out.push_back(body.substr(start, body.find('"', start) - start));
  }
  return out;
}

class PagedIndexTest : public api::testing::ApiTest {
 protected:
  static void SetUpTestSuite() { ::setenv("HUBWATCH_API_FIXTURE_DB", PageDb().c_str(), 1); }
  void SetUp() override {
    ApiTest::SetUp();
    const auto start = std::chrono::steady_clock::now();
    FillRepos(*store_, 0, BulkRepos(), true);
    std::printf("%d repos added in %.2f s\n", BulkRepos(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    StartServer();
  }

  // GET `target`: 200, within kMaxBody; its time printed (the numbers in the report).
  HttpResponse Page(const std::string& target) {
    const auto start = std::chrono::steady_clock::now();
    HttpResponse r = Get(target);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-48s %7zu bytes %7.1f ms\n", target.substr(0, 48).c_str(), r.body.size(), ms);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body.substr(0, 300);
    EXPECT_LE(r.body.size(), kMaxBody) << target;
    return r;
  }
};

TEST_F(PagedIndexTest, EveryPageHoldsAtMostOnePage) {
  for (const char* target :
       {"/", "/?family=fam-1", "/?name=model-0001", "/?owner=bulk-03", "/?state=ok",
        "/?changed_since=2033-05-18", "/?changed_since=2033-05-18T03:34:00Z&family=fam-2",
        "/?family=no+model_type"}) {
    const HttpResponse r = Page(target);
    EXPECT_LE(ModelRows(r.body).size(), 100u) << target;
    EXPECT_GE(ModelRows(r.body).size(), 1u) << target;
  }
  // The landing page: the families with their counts, the largest family's first page.
  const HttpResponse landing = Page("/");
  EXPECT_NE(landing.body.find("<a href=\"/?family=fam-0\">fam-0</a>"), std::string::npos);
  EXPECT_EQ(ModelRows(landing.body).size(), 100u);
  EXPECT_NE(LinkTo(landing.body, "Next page"), "");
  EXPECT_EQ(LinkTo(landing.body, "Previous page"), "");
  for (const std::string target :
       {"/index.json", "/index.json?family=fam-2", "/index.json?limit=7&owner=bulk-04",
        "/api/v1/repos", "/api/v1/repos?limit=3"}) {
    const nlohmann::json j = Page(target).json();
    const nlohmann::json& rows = j.contains("models") ? j["models"] : j["repos"];
    ASSERT_TRUE(rows.is_array()) << target;
    EXPECT_LE(rows.size(), 100u) << target;
    EXPECT_GE(rows.size(), 1u) << target;
  }
  EXPECT_EQ(Page("/index.json?limit=7&owner=bulk-04").json()["models"].size(), 7u);
  EXPECT_EQ(Page("/index.json?limit=7&owner=bulk-04").json()["next"],
            "/index.json?owner=bulk-04&after=bulk-04%2Fmodel-000064&limit=7");
  for (const std::string target : {"/changes", "/changes?since=2033-05-18",
                                   "/changes?impact=breaking&since=2033-05-18T03:40:00Z"}) {
    const HttpResponse r = Page(target);
    EXPECT_LE(Count(r.body, "<tr><td>"), 50u) << target;
    EXPECT_GE(Count(r.body, "<tr><td>"), 1u) << target;
  }
}

TEST_F(PagedIndexTest, IndexJsonCursorsVisitEveryRepoOnceWhileReposAreAdded) {
  auto all = store_->repo_pages().Count();
  ASSERT_TRUE(all.ok());
  std::map<std::string, int> seen;
  std::string next = "/index.json";
  int pages = 0, added = 0;
  while (!next.empty() && pages < 1000) {
    const nlohmann::json j = Page(next).json();
    ++pages;
    for (const auto& m : j["models"]) ++seen[m["repo"].get<std::string>()];
    next = j["next"].is_string() ? j["next"].get<std::string>() : "";
    // Between pages: a repo sorting before everything (never listed by this walk).
    ASSERT_TRUE(store_->repos()
                    .AddRepo({.id = "aaa/added-" + std::to_string(added++), .added_at = 1})
                    .ok());
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), *all);
  for (const auto& [id, n] : seen) EXPECT_EQ(n, 1) << id;
  for (int i = 0; i < BulkRepos(); ++i) EXPECT_EQ(seen[BulkId(i)], 1) << BulkId(i);
  EXPECT_FALSE(seen.contains("aaa/added-0"));

  // The API's repo list: the same walk by next_after.
  std::set<std::string> listed;
  std::string after;
  do {
    const nlohmann::json j =
        Page("/api/v1/repos" + (after.empty() ? "" : "?after=" + QueryEscape(after))).json();
    for (const auto& r : j["repos"]) EXPECT_TRUE(listed.insert(r["id"].get<std::string>()).second);
    after = j.contains("next_after") ? j["next_after"].get<std::string>() : "";
  } while (!after.empty());
  EXPECT_EQ(static_cast<int64_t>(listed.size()), *store_->repo_pages().Count());
}

TEST_F(PagedIndexTest, FamilyPagesWalkForwardAndBack) {
  const int members = (BulkRepos() + 6) / 7;  // fam-0: 0, 7, 14, ...
  std::vector<std::string> walked;
  std::vector<std::string> pages = {"/?family=fam-0"};
  while (true) {
    const HttpResponse r = Page(pages.back());
    const std::vector<std::string> rows = ModelRows(r.body);
    ASSERT_LE(rows.size(), 100u);
    walked.insert(walked.end(), rows.begin(), rows.end());
    const std::string next = LinkTo(r.body, "Next page");
    if (next.empty()) break;
    pages.push_back(next);
  }
  EXPECT_EQ(static_cast<int>(walked.size()), members);
  EXPECT_EQ(std::set<std::string>(walked.begin(), walked.end()).size(), walked.size());
  ASSERT_GE(pages.size(), 2u);
  // Previous from the second page is the first page's rows.
  const std::string back = LinkTo(Page(pages[1]).body, "Previous page");
  ASSERT_FALSE(back.empty());
  EXPECT_EQ(ModelRows(Page(back).body), ModelRows(Page(pages[0]).body));
}

TEST_F(PagedIndexTest, ChangesCursorsVisitEveryChangeOnce) {
  std::set<std::string> rows;
  std::string next = "/changes?since=2033-05-18";  // every bulk change, none of the fixture's
  int pages = 0;
  while (!next.empty() && pages < 1000) {
    const HttpResponse r = Page(next);
    ++pages;
    for (size_t at = r.body.find("<tr><td>"); at != std::string::npos;
         at = r.body.find("<tr><td>", at + 1)) {
      rows.insert(r.body.substr(at, r.body.find("</tr>", at) - at));
    }
    next = LinkTo(r.body, "Older changes");
  }
  EXPECT_EQ(static_cast<int>(rows.size()), BulkRepos());  // each row names its own repo
  EXPECT_EQ(pages, (BulkRepos() + 49) / 50);
}

TEST_F(PagedIndexTest, BadCursorsTimesAndTermsAreRefused) {
  const std::string long_term(201, 'a');
  for (const std::string& target : std::vector<std::string>{
           "/?after=a&before=b", "/?changed_since=someday", "/?state=vibes", "/?owner=a/b",
           "/?limit=101", "/?limit=0", "/?name=" + long_term, "/?family=" + long_term,
           "/changes?before=12", "/changes?before=abc.def", "/changes?before=1.0",
           "/changes?before=" + std::string(50, '1') + ".1"}) {
    const HttpResponse r = Get(target);
    EXPECT_EQ(r.status, 400) << target;
    EXPECT_NE(r.body.find("<p class=\"error\">"), std::string::npos) << target;
  }
  EXPECT_EQ(Get("/index.json?limit=101").status, 400);
  EXPECT_EQ(Get("/index.json?limit=101").json()["error"], "limit must be an integer from 1 to 100");
  EXPECT_EQ(Get("/api/v1/repos?limit=0").status, 400);
  EXPECT_EQ(Get("/api/v1/repos?after=" + std::string(201, 'x')).status, 400);
  // An unknown cursor is not an error: the page after it, or none.
  EXPECT_EQ(Get("/?after=zzzz").status, 200);
  EXPECT_EQ(ModelRows(Get("/?family=fam-1&after=zzzz").body).size(), 0u);
}

}  // namespace
}  // namespace hubwatch::page::testing
