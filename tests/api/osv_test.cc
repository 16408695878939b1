// Contract tests: the osv.dev-compatible API (GET /v1/vulns/{id}, POST /v1/query,
// POST /v1/querybatch) with osv.dev's request and response shapes.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "tests/api/api_env.h"

namespace hubwatch::api::testing {
namespace {

using Ids = std::set<std::string>;

Ids IdsOf(const nlohmann::json& response) {
  Ids ids;
  for (const auto& v : response.value("vulns", nlohmann::json::array())) ids.insert(v["id"]);
  return ids;
}

// osv.dev semantics computed here from the records themselves: an advisory affects revision X
// of its repo iff introduced <= X < fixed in the repo's history ("0" = the beginning).
Ids ExpectedAffecting(const std::vector<store::AdvisoryRecord>& advisories,
                      const std::vector<store::RevisionRecord>& newest_first,
                      const std::string& repo, const std::string& x) {
  std::map<std::string, int> order;
  for (size_t i = 0; i < newest_first.size(); ++i) {
    order[newest_first[i].sha] = static_cast<int>(newest_first.size() - i);
  }
  Ids ids;
  for (const auto& a : advisories) {
    if (a.repo != repo) continue;
    const nlohmann::json& events = a.osv["affected"][0]["ranges"][0]["events"];
    const std::string introduced = events[0]["introduced"];
    const std::string fixed = events[1]["fixed"];
    const int lo = introduced == "0" ? 0 : order.at(introduced);
    if (lo <= order.at(x) && order.at(x) < order.at(fixed)) ids.insert(a.id);
  }
  return ids;
}

TEST_F(ApiTest, VulnsByIdReturnsSchemaValidRecords) {
  StartServer();
  const std::vector<store::AdvisoryRecord> all = Advisories();
  const std::string dir = ::testing::TempDir() + "hubwatch_api_vulns";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const auto& a : all) {
    const HttpResponse r = Get("/v1/vulns/" + a.id);
    ASSERT_EQ(r.status, 200) << a.id;
    EXPECT_EQ(r.json(), a.osv);
    std::ofstream(dir + "/" + a.id + ".json") << r.body;
  }
  const std::string cmd = std::string("python3 ") + HUBWATCH_API_TEST_DIR +
                          "/../advisory/validate_osv.py " + HUBWATCH_API_TEST_DIR +
                          "/../../schema/osv-schema.json --dir " + dir;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  std::filesystem::remove_all(dir);
  const HttpResponse missing = Get("/v1/vulns/x_HUBWATCH-0000000000000000");
  EXPECT_EQ(missing.status, 404);
  EXPECT_TRUE(missing.json().contains("error"));
}

TEST_F(ApiTest, QueryByCommitFollowsTheGitRanges) {
  StartServer();
  const std::vector<store::AdvisoryRecord> all = Advisories();
  size_t nonempty = 0;
  for (const char* repo : {kLlama, kMistral}) {
    const std::vector<store::RevisionRecord> revs = Revisions(repo);
    for (const auto& rev : revs) {
      const Ids expected = ExpectedAffecting(all, revs, repo, rev.sha);
      const HttpResponse r = Post("/v1/query", nlohmann::json{{"commit", rev.sha}}.dump());
      ASSERT_EQ(r.status, 200) << r.body;
      EXPECT_EQ(IdsOf(r.json()), expected) << repo << " @ " << rev.sha;
      nonempty += !expected.empty();
      if (expected.empty()) {
        EXPECT_EQ(r.json(), nlohmann::json::object());  // proto3: an empty list is left out
      }
      // Whole records come back.
      for (const auto& v : r.json().value("vulns", nlohmann::json::array())) {
        EXPECT_EQ(v["schema_version"], "1.7.5");
        EXPECT_TRUE(v.contains("affected"));
      }
    }
  }
  EXPECT_GE(nonempty, 4u);
  EXPECT_EQ(Post("/v1/query", R"({"commit": "0000000000000000000000000000000000000000"})").body,
            "{}");
}

TEST_F(ApiTest, QueryByPackageNamePurlAndGitUrl) {
  StartServer();
  const std::vector<store::AdvisoryRecord> all = Advisories();
  const std::vector<store::RevisionRecord> revs = Revisions(kMistral);
  const std::string x = revs[3].sha;
  const Ids expected = ExpectedAffecting(all, revs, kMistral, x);
  ASSERT_FALSE(expected.empty());
  const std::string name = kMistral;
  for (const nlohmann::json& q : {
           nlohmann::json{{"package", {{"name", name}}}, {"commit", x}},
           nlohmann::json{{"package", {{"name", name}}}, {"version", x.substr(0, 8)}},
           nlohmann::json{{"package", {{"purl", "pkg:huggingface/" + name + "@" + x}}}},
           nlohmann::json{{"package", {{"purl", "pkg:huggingface/" + name}}}, {"version", x}},
           nlohmann::json{
               {"package", {{"name", "https://huggingface.co/" + name}, {"ecosystem", "GIT"}}},
               {"commit", x}},
       }) {
    const HttpResponse r = Post("/v1/query", q.dump());
    ASSERT_EQ(r.status, 200) << q.dump() << " -> " << r.body;
    EXPECT_EQ(IdsOf(r.json()), expected) << q.dump();
  }
  // A package alone: every advisory of the repo. A ref names its head (nothing after it).
  Ids repo_ids;
  for (const auto& a : all) {
    if (a.repo == name) repo_ids.insert(a.id);
  }
  EXPECT_EQ(IdsOf(Post("/v1/query", nlohmann::json{{"package", {{"name", name}}}}.dump()).json()),
            repo_ids);
  EXPECT_EQ(
      Post("/v1/query", nlohmann::json{{"package", {{"name", name}}}, {"version", "main"}}.dump())
          .body,
      "{}");
  // Other ecosystems and unknown repos match nothing.
  for (const char* none :
       {R"({"package": {"name": "jinja2", "ecosystem": "PyPI"}, "version": "2.0"})",
        R"({"package": {"purl": "pkg:pypi/jinja2@2.0"}})",
        R"({"package": {"name": "ns/unknown"}})"}) {
    const HttpResponse r = Post("/v1/query", none);
    EXPECT_EQ(r.status, 200) << none;
    EXPECT_EQ(r.body, "{}") << none;
  }
}

TEST_F(ApiTest, QueryPagesWithPageToken) {
  deps_.tuning.osv_page_size = 2;
  StartServer();
  std::vector<std::string> expected;
  for (const auto& a : Advisories(kMistral)) expected.push_back(a.id);
  ASSERT_GT(expected.size(), 4u);
  std::vector<std::string> got;
  nlohmann::json q = {{"package", {{"name", kMistral}}}};
  for (int page = 0; page < 100; ++page) {
    const nlohmann::json r = Post("/v1/query", q.dump()).json();
    for (const auto& v : r.value("vulns", nlohmann::json::array())) got.push_back(v["id"]);
    if (!r.contains("next_page_token")) break;
    EXPECT_EQ(r["vulns"].size(), 2u);
    q["page_token"] = r["next_page_token"];
  }
  EXPECT_EQ(got, expected);
}

TEST_F(ApiTest, QueryBatchAnswersIdAndModifiedInOrder) {
  StartServer();
  const std::vector<store::AdvisoryRecord> all = Advisories();
  const std::vector<store::RevisionRecord> revs = Revisions(kLlama);
  const std::string x = revs.back().sha;  // the first revision: every later change affects it
  const Ids expected = ExpectedAffecting(all, revs, kLlama, x);
  ASSERT_FALSE(expected.empty());
  const nlohmann::json batch = {
      {"queries",
       {{{"commit", x}},
        {{"package", {{"name", "requests"}, {"ecosystem", "PyPI"}}}, {"version", "2.0"}},
        {{"package", {{"purl", std::string("pkg:huggingface/") + kLlama + "@" + x}}}}}}};
  const HttpResponse r = Post("/v1/querybatch", batch.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json results = r.json()["results"];
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(IdsOf(results[0]), expected);
  EXPECT_EQ(results[1], nlohmann::json::object());
  EXPECT_EQ(IdsOf(results[2]), expected);
  for (const auto& v : results[0]["vulns"]) {
    EXPECT_EQ(v.size(), 2u);  // id and modified only
    EXPECT_TRUE(v.contains("id") && v.contains("modified"));
  }
}

TEST_F(ApiTest, OsvErrors) {
  StartServer();
  for (
      const char* bad :
      {"{", "[]", "{}", R"({"commit": "abc"})",
       R"({"package": {"name": "a/b"}, "commit": "0000000000000000000000000000000000000000", "version": "1"})",
       R"({"package": {"purl": "pkg:huggingface/a/b@abcdef1"}, "version": "abcdef1"})"}) {
    const HttpResponse r = Post("/v1/query", bad);
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_TRUE(r.json().contains("error")) << bad;
  }
  EXPECT_EQ(Post("/v1/querybatch", R"({"queries": {}})").status, 400);
  const HttpResponse r =
      Post("/v1/querybatch", R"({"queries": [{"package": {"name": "a/b"}}, {}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.json()["error"].get<std::string>().find("queries[1]"), std::string::npos);
  const HttpResponse get = Get("/v1/query");
  EXPECT_EQ(get.status, 405);
  EXPECT_EQ(get.header("allow"), "POST");
}

}  // namespace
}  // namespace hubwatch::api::testing
