// Contract tests: repos, revisions, one revision, changes, estimates.

#include <sqlite3.h>

#include "tests/api/api_env.h"

namespace hubwatch::api::testing {
namespace {

const std::string kLlamaPath = std::string("/api/v1/repos/") + kLlama;
const std::string kMistralPath = std::string("/api/v1/repos/") + kMistral;

void ExpectError(const HttpResponse& r, int status) {
  EXPECT_EQ(r.status, status) << r.raw;
  EXPECT_EQ(r.header("content-type"), "application/json");
  const nlohmann::json j = r.json();
  ASSERT_TRUE(j.is_object()) << r.body;
  EXPECT_EQ(j.size(), 1u) << r.body;
  EXPECT_TRUE(j["error"].is_string() && !j["error"].get<std::string>().empty()) << r.body;
}

TEST_F(ApiTest, ListsTrackedRepos) {
  StartServer();
  const HttpResponse r = Get("/api/v1/repos");
  ASSERT_EQ(r.status, 200);
  const nlohmann::json repos = r.json()["repos"];
  ASSERT_EQ(repos.size(), 2u);
  EXPECT_EQ(repos[0]["id"], kLlama);
  EXPECT_EQ(repos[1]["id"], kMistral);
  EXPECT_EQ(repos[0]["refs"], nlohmann::json::array({"main"}));
  EXPECT_EQ(repos[0]["state"], "ok");
  EXPECT_EQ(repos[0]["added_at"], "2024-12-02T13:12:35Z");
}

TEST_F(ApiTest, OneRepoNamesItsLatestRevision) {
  StartServer();
  const HttpResponse r = Get(kMistralPath);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["latest_revision"], Revisions(kMistral).front().sha);
  ExpectError(Get("/api/v1/repos/nobody/nothing"), 404);
}

TEST_F(ApiTest, RevisionsNewestFirstWithPaging) {
  StartServer();
  const std::vector<store::RevisionRecord> all = Revisions(kMistral);
  ASSERT_GE(all.size(), 4u);
  HttpResponse r = Get(kMistralPath + "/revisions?limit=2");
  ASSERT_EQ(r.status, 200);
  nlohmann::json page = r.json();
  ASSERT_EQ(page["revisions"].size(), 2u);
  EXPECT_EQ(page["revisions"][0]["sha"], all[0].sha);
  EXPECT_EQ(page["revisions"][1]["sha"], all[1].sha);
  EXPECT_EQ(page["revisions"][0]["parents"], nlohmann::json(all[0].parents));
  EXPECT_EQ(page["revisions"][0]["title"], all[0].title);
  EXPECT_EQ(page["revisions"][0]["authored_at"], all[0].authored_at);
  ASSERT_EQ(page["next_before"], all[1].sha);

  // Following next_before walks the whole history exactly once.
  std::vector<std::string> seen = {all[0].sha, all[1].sha};
  std::string before = page["next_before"];
  while (!before.empty()) {
    r = Get(kMistralPath + "/revisions?limit=2&before=" + before);
    ASSERT_EQ(r.status, 200);
    page = r.json();
    for (const auto& rev : page["revisions"]) seen.push_back(rev["sha"]);
    before = page.value("next_before", "");
  }
  ASSERT_EQ(seen.size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(seen[i], all[i].sha);

  // A short sha works as a cursor too.
  r = Get(kMistralPath + "/revisions?before=" + all[0].sha.substr(0, 7));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["revisions"].size(), all.size() - 1);
}

TEST_F(ApiTest, RevisionsRejectBadParameters) {
  StartServer();
  ExpectError(Get(kMistralPath + "/revisions?limit=0"), 400);
  ExpectError(Get(kMistralPath + "/revisions?limit=1001"), 400);
  ExpectError(Get(kMistralPath + "/revisions?limit=ten"), 400);
  ExpectError(Get(kMistralPath + "/revisions?before=xyz"), 400);
  ExpectError(Get(kMistralPath + "/revisions?before=" + std::string(40, '0')), 404);
  ExpectError(Get(kMistralPath + "/revisions?before=%zz"), 400);
}

TEST_F(ApiTest, BadRepoIdsAre400AndUnknownOnes404) {
  StartServer();
  for (const char* bad : {"/api/v1/repos/ns/na--me/revisions", "/api/v1/repos/ns/na..me/revisions",
                          "/api/v1/repos/ns/name.git/revisions", "/api/v1/repos/-ns/name/changes",
                          "/api/v1/repos/ns/n%C3%A9/estimate", "/api/v1/repos/ns/a%2Fb/badge",
                          "/api/v1/repos/n%20s/name/revisions"}) {
    ExpectError(Get(bad), 400);
  }
  const std::string long_name = "/api/v1/repos/ns/" + std::string(97, 'a') + "/revisions";
  ExpectError(Get(long_name), 400);
  ExpectError(Get("/api/v1/repos/ns/unknown/revisions"), 404);
  ExpectError(Get("/api/v1/repos/ns/unknown/changes"), 404);
}

TEST_F(ApiTest, RevisionBySha) {
  StartServer();
  const std::vector<store::RevisionRecord> all = Revisions(kLlama);
  const store::RevisionRecord& rev = all[1];
  auto expected = inspect().revisions().ChangesOf(kLlama, rev.sha);
  ASSERT_TRUE(expected.ok());
  for (const std::string& name : {rev.sha, rev.sha.substr(0, 7)}) {
    const HttpResponse r = Get(kLlamaPath + "/revisions/" + name);
    ASSERT_EQ(r.status, 200) << r.body;
    const nlohmann::json j = r.json();
    EXPECT_EQ(j["sha"], rev.sha);
    EXPECT_EQ(j["repo"], kLlama);
    ASSERT_EQ(j["changes"].size(), expected->size());
    for (size_t i = 0; i < expected->size(); ++i) {
      EXPECT_EQ(j["changes"][i]["summary"], (*expected)[i].change.summary);
      EXPECT_EQ(j["changes"][i]["revision"], rev.sha);
    }
  }
  ExpectError(Get(kLlamaPath + "/revisions/" + std::string(40, 'f')), 404);
  ExpectError(Get(kLlamaPath + "/revisions/abc"), 400);
  ExpectError(Get(kLlamaPath + "/revisions/" + std::string(40, 'G')), 400);
  ExpectError(Get(kLlamaPath + "/revisions/" + rev.sha.substr(0, 6)), 400);
}

TEST_F(ApiTest, ChangesFilteredByKindAndSince) {
  StartServer();
  auto all = inspect().revisions().ListChanges({.repo = kMistral});
  ASSERT_TRUE(all.ok());
  HttpResponse r = Get(kMistralPath + "/changes");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["changes"].size(), all->size());
  EXPECT_EQ(r.json()["truncated"], false);

  r = Get(kMistralPath + "/changes?kind=chat_template");
  ASSERT_EQ(r.status, 200);
  size_t templates = 0;
  for (const auto& c : *all) templates += c.change.kind == diff::ChangeKind::kChatTemplate;
  ASSERT_GE(templates, 3u);
  EXPECT_EQ(r.json()["changes"].size(), templates);
  const nlohmann::json templates_json = r.json();  // range-for must not borrow a temporary
  for (const auto& c : templates_json["changes"]) EXPECT_EQ(c["kind"], "chat_template");

  // Since a revision: exactly the changes of the revisions after it.
  const std::vector<store::RevisionRecord> revs = Revisions(kMistral);
  const store::RevisionRecord& pin = revs[2];  // two revisions came after it
  size_t after = 0;
  for (size_t i = 0; i < 2; ++i)
    after += inspect().revisions().ChangesOf(kMistral, revs[i].sha)->size();
  r = Get(kMistralPath + "/changes?since=" + pin.sha.substr(0, 10));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["changes"].size(), after);
  EXPECT_EQ(r.json()["since_revision"], pin.sha);
  const nlohmann::json since_json = r.json();
  for (const auto& c : since_json["changes"]) {
    EXPECT_TRUE(c["revision"] == revs[0].sha || c["revision"] == revs[1].sha);
  }

  // Since a time: the commit time, the day of the revision after the pin and on.
  const std::string day_after_pin = revs[1].authored_at.substr(0, 10);
  r = Get(kMistralPath + "/changes?since=" + day_after_pin);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["changes"].size(), after) << day_after_pin;
  EXPECT_EQ(r.json()["changes"][0]["committed_at"], revs[1].authored_at);
  // When hubwatch recorded them (all at ingestion) is a filter of its own.
  r = Get(kMistralPath + "/changes?recorded_since=" + std::to_string(kIngestNow));
  EXPECT_EQ(r.json()["changes"].size(), all->size());
  r = Get(kMistralPath + "/changes?recorded_since=" + std::to_string(kIngestNow + 1));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["changes"].size(), 0u);

  r = Get(kMistralPath + "/changes?limit=1");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["changes"].size(), 1u);
  EXPECT_EQ(r.json()["truncated"], true);
  // The pages of two, walked by next_after: every change once, in the order recorded.
  std::vector<int64_t> walked;
  std::string cursor;
  for (int page = 0; page < 100; ++page) {
    r = Get(kMistralPath + "/changes?limit=2&kind=chat_template" + cursor);
    ASSERT_EQ(r.status, 200) << r.body;
    const nlohmann::json j = r.json();
    ASSERT_LE(j["changes"].size(), 2u);
    for (const auto& c : j["changes"]) walked.push_back(c["id"].get<int64_t>());
    if (!j["truncated"].get<bool>()) break;
    cursor = "&after=" + std::to_string(j["next_after"].get<int64_t>());
  }
  std::vector<int64_t> expected;
  for (const auto& c : *all) {
    if (c.change.kind == diff::ChangeKind::kChatTemplate) expected.push_back(c.id);
  }
  EXPECT_EQ(walked, expected);
  ExpectError(Get(kMistralPath + "/changes?after=x"), 400);

  ExpectError(Get(kMistralPath + "/changes?kind=vibes"), 400);
  ExpectError(Get(kMistralPath + "/changes?since=yesterday"), 400);
  ExpectError(Get(kMistralPath + "/changes?since=" + std::string(12, 'e')), 400);
}

TEST_F(ApiTest, EstimateLatestAndByRevision) {
  StartServer();
  auto latest = inspect().revisions().LatestEstimate(kLlama);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  HttpResponse r = Get(kLlamaPath + "/estimate");
  ASSERT_EQ(r.status, 200);
  nlohmann::json j = r.json();
  EXPECT_EQ(j["revision"], (*latest)->sha);
  EXPECT_EQ(j["params_total"], (*latest)->params_total);
  EXPECT_EQ(j["estimate"], (*latest)->estimate);
  EXPECT_EQ(j["estimate"]["schema"], "hubwatch.estimate/1");

  r = Get(kLlamaPath + "/estimate?revision=" + (*latest)->sha);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["revision"], (*latest)->sha);
  // The newest revision only touched tokenizer_config.json: no estimate of its own.
  const std::string newest = Revisions(kLlama).front().sha;
  if (newest != (*latest)->sha) {
    ExpectError(Get(kLlamaPath + "/estimate?revision=" + newest), 404);
  }
  ExpectError(Get(kLlamaPath + "/estimate?revision=nothex!"), 400);
}

// The user's own workload on a tracked model: the revision estimated again with it, as
// POST /api/v1/plan would estimate its config (issue 34).
TEST_F(ApiTest, EstimateWithTheUsersWorkload) {
  StartServer();
  auto latest = inspect().revisions().LatestEstimate(kLlama);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  HttpResponse r = Get(kLlamaPath + "/estimate?context=8192&batch=4&seq=1024&cards=h100,l4");
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
  const nlohmann::json j = r.json();
  EXPECT_EQ(j["revision"], (*latest)->sha);
  EXPECT_EQ(j["params_total"], (*latest)->params_total);
  EXPECT_EQ(j["estimate"]["workload"]["context"], 8192);
  EXPECT_EQ(j["estimate"]["workload"]["batch"], 4);
  EXPECT_EQ(j["estimate"]["workload"]["seq"], 1024);
  EXPECT_EQ(j["estimate"]["fit"].size(), 2u);
  EXPECT_EQ(j["estimate"]["kv_cache"]["context"], 8192);
  // The stored estimate is the default workload's.
  EXPECT_NE(Get(kLlamaPath + "/estimate").json()["estimate"]["kv_cache"]["context"], 8192);
  ExpectError(Get(kLlamaPath + "/estimate?context=0"), 400);
  ExpectError(Get(kLlamaPath + "/estimate?cards=warp-drive"), 400);
}

// An estimate stored before estimates were capped (or by a bug) is refused, not sent: the reply
// would hold the whole row, and a client that does not read it would hold it in memory.
TEST_F(ApiTest, AnOversizedStoredEstimateIsAnErrorNotTheBody) {
  nlohmann::json huge = {{"schema", "hubwatch.estimate/1"}, {"lints", nlohmann::json::array()}};
  for (int i = 0; i < 40000; ++i) {
    huge["lints"].push_back(
        {{"code", "token_id_out_of_range"},
         {"message", "eos_token_id " + std::to_string(i) + " is not in the vocabulary"}});
  }
  const std::string text = huge.dump();
  ASSERT_GT(text.size(), 2u << 20);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* update = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE estimates SET estimate = ?1 WHERE repo = ?2", -1,
                               &update, nullptr),
            SQLITE_OK);
  sqlite3_bind_text(update, 1, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
  sqlite3_bind_text(update, 2, kLlama, -1, SQLITE_STATIC);
  EXPECT_EQ(sqlite3_step(update), SQLITE_DONE);
  sqlite3_finalize(update);
  EXPECT_GE(sqlite3_changes(db), 1);
  sqlite3_close(db);

  StartServer();
  auto latest = inspect().revisions().LatestEstimate(kLlama);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  for (const std::string& target :
       {kLlamaPath + "/estimate", kLlamaPath + "/estimate?revision=" + (*latest)->sha}) {
    const HttpResponse r = Get(target);
    ExpectError(r, 500);
    EXPECT_LT(r.body.size(), 1000u);
    const std::string error = ErrorOf(r);
    EXPECT_NE(error.find("too large to serve"), std::string::npos) << error;
    EXPECT_NE(error.find(std::to_string(text.size()) + " bytes"), std::string::npos) << error;
  }
  EXPECT_EQ(Get(kMistralPath).status, 200);
}

}  // namespace
}  // namespace hubwatch::api::testing
