// Contract tests: the admin endpoints (token checks, repos, subscriptions routing).

#include "daemon/api/subscriptions_handler.h"
#include "tests/api/api_env.h"

namespace hubwatch::api::testing {
namespace {

void ExpectError(const HttpResponse& r, int status) {
  EXPECT_EQ(r.status, status) << r.raw;
  EXPECT_TRUE(r.json().is_object() && r.json()["error"].is_string()) << r.body;
}

Headers Bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

TEST_F(ApiTest, AdminNeedsTheToken) {
  StartServer();
  const std::string body = R"({"id": "google/gemma-7b-it"})";
  HttpResponse r = Post("/api/v1/repos", body);
  ExpectError(r, 401);
  EXPECT_EQ(r.header("www-authenticate"), "Bearer realm=\"hubwatch admin\"");
  ExpectError(Post("/api/v1/repos", body, {{"Authorization", "Basic YTpi"}}), 401);
  ExpectError(Post("/api/v1/repos", body, Bearer("wrong")), 403);
  ExpectError(Post("/api/v1/repos", body, Bearer(std::string(kAdminToken) + "x")), 403);
  ExpectError(Post("/api/v1/repos", body, Bearer(std::string(kAdminToken).substr(1))), 403);
  ExpectError(Request(port_, "DELETE", std::string("/api/v1/repos/") + kMistral), 401);
  ExpectError(
      Request(port_, "DELETE", std::string("/api/v1/repos/") + kMistral, "", Bearer("nope")), 403);
  ExpectError(Get("/api/v1/subscriptions"), 401);
  EXPECT_TRUE(control_.added().empty());
  EXPECT_TRUE(inspect().repos().GetRepo("google/gemma-7b-it")->has_value() == false);
}

TEST_F(ApiTest, AdminIsOffWithoutAConfiguredToken) {
  deps_.admin_token.reset();
  StartServer();
  ExpectError(Post("/api/v1/repos", R"({"id": "a/b"})", Bearer("anything")), 403);
  ExpectError(Post("/api/v1/repos", R"({"id": "a/b"})", Bearer("")), 401);  // no credentials
}

TEST_F(ApiTest, AddRepoWritesAndSchedules) {
  StartServer();
  HttpResponse r =
      Post("/api/v1/repos", R"({"id": "google/gemma-7b-it", "refs": ["main", "v1.0"]})", Admin());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.json()["id"], "google/gemma-7b-it");
  EXPECT_EQ(r.json()["refs"], nlohmann::json::array({"main", "v1.0"}));
  EXPECT_EQ(control_.added(), std::vector<std::string>{"google/gemma-7b-it"});
  auto stored = inspect().repos().GetRepo("google/gemma-7b-it");
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->refs, (std::vector<std::string>{"main", "v1.0"}));
  EXPECT_EQ((*stored)->added_at, kServerNow);
  EXPECT_EQ(Get("/api/v1/repos/google/gemma-7b-it").status, 200);

  // Again: the refs change, 200.
  r = Post("/api/v1/repos", R"({"id": "google/gemma-7b-it"})", Admin());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["refs"], nlohmann::json::array({"main"}));
  EXPECT_EQ(control_.added().size(), 2u);
}

// The Hub matches ids without regard to letter case: another spelling of a tracked repo is not a
// second repo to track.
TEST_F(ApiTest, AddRepoInOtherLettersIsTheTrackedRepo) {
  StartServer();
  ASSERT_EQ(Post("/api/v1/repos", R"({"id": "google/gemma-7b-it"})", Admin()).status, 201);
  HttpResponse r = Post("/api/v1/repos", R"({"id": "Google/Gemma-7B-it"})", Admin());
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("google/gemma-7b-it, already tracked"), std::string::npos) << r.body;
  EXPECT_EQ(control_.added(), std::vector<std::string>{"google/gemma-7b-it"});
  auto stored = inspect().repos().GetRepo("Google/Gemma-7B-it");
  ASSERT_TRUE(stored.ok());
  EXPECT_FALSE(stored->has_value());
}

// A repo's pins: per pin, how many advisories affect it (the ones ?affects= lists) and the
// newest revision, which takes every fix; the badge says the same of the most affected pin.
TEST_F(ApiTest, PinsSayHowManyAdvisoriesAffectEachAndWhereTheFixesAre) {
  StartServer();
  const std::vector<store::RevisionRecord> revs = Revisions(kMistral);  // newest first
  ASSERT_GE(revs.size(), 3u);
  const std::string old_pin = revs.back().sha.substr(0, 12), newest = revs.front().sha;
  HttpResponse r = Post("/api/v1/repos",
                        nlohmann::json({{"id", kMistral},
                                        {"pins", {old_pin, newest, "0000000000"}}})
                            .dump(),
                        Admin());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ((*inspect().repos().GetRepo(kMistral))->pins,
            (std::vector<std::string>{old_pin, newest, "0000000000"}));

  r = Get(std::string("/api/v1/repos/") + kMistral);
  ASSERT_EQ(r.status, 200);
  const nlohmann::json pins = r.json()["pins"];
  ASSERT_EQ(pins.size(), 3u);
  const size_t affecting =
      Get(std::string("/api/v1/advisories?repo=") + kMistral + "&affects=" + old_pin)
          .json()["advisories"]
          .size();
  ASSERT_GT(affecting, 0u);
  EXPECT_EQ(pins[0]["pin"], old_pin);
  EXPECT_EQ(pins[0]["revision"], revs.back().sha);
  EXPECT_EQ(pins[0]["advisories"], affecting);
  EXPECT_EQ(pins[0]["newest"], newest);
  EXPECT_EQ(pins[0]["current"], false);
  EXPECT_EQ(pins[1]["advisories"], 0);
  EXPECT_EQ(pins[1]["current"], true);
  EXPECT_TRUE(pins[2]["revision"].is_null());  // not a revision the store has
  EXPECT_NE(pins[2]["problem"].get<std::string>().find("no revision 0000000000"),
            std::string::npos);
  // The repo list carries the same.
  const nlohmann::json repos = Get("/api/v1/repos").json()["repos"];  // a range-for keeps
  for (const auto& repo : repos) {  // only its last temporary alive (before C++23)
    if (repo["id"] == kMistral) {
      EXPECT_EQ(repo["pins"], pins);
    }
  }

  // The badge names the unknown pin first; without it, the most affected pin.
  EXPECT_EQ(Get(std::string("/api/v1/repos/") + kMistral + "/badge?pins").json()["message"],
            "pin 0000000 unknown");
  ASSERT_EQ(Post("/api/v1/repos", nlohmann::json({{"id", kMistral}, {"pins", {old_pin}}}).dump(),
                 Admin())
                .status,
            200);
  EXPECT_EQ(Get(std::string("/api/v1/repos/") + kMistral + "/badge?pins").json()["message"],
            std::to_string(affecting) + " advisories affect " + old_pin.substr(0, 7));
}

TEST_F(ApiTest, AddRepoValidatesTheBody) {
  StartServer();
  for (const char* bad :
       {"not json", "[]", "{}", R"({"id": 5})", R"({"id": "a--b/c"})", R"({"id": "noslash"})",
        R"({"id": "a/b", "refs": []})", R"({"id": "a/b", "refs": "main"})",
        R"({"id": "a/b", "refs": [""]})", R"({"id": "a/b", "refs": ["ma in"]})",
        R"({"id": "a/b", "refs": ["../x"]})", R"({"id": "a/b", "extra": 1})",
        R"({"id": "a/b", "pins": "abcdef0"})", R"({"id": "a/b", "pins": ["abc"]})",
        R"({"id": "a/b", "pins": ["ABCDEF0"]})", R"({"id": "a/b", "pins": [7]})",
        R"({"id": "caf\u00e9/b"})"}) {
    ExpectError(Post("/api/v1/repos", bad, Admin()), 400);
  }
  EXPECT_TRUE(control_.added().empty());
}

TEST_F(ApiTest, RemoveRepo) {
  StartServer();
  HttpResponse r = Request(port_, "DELETE", std::string("/api/v1/repos/") + kMistral, "", Admin());
  EXPECT_EQ(r.status, 204) << r.raw;
  EXPECT_TRUE(r.body.empty());
  EXPECT_EQ(control_.removed(), std::vector<std::string>{kMistral});
  EXPECT_FALSE(inspect().repos().GetRepo(kMistral)->has_value());
  EXPECT_TRUE(Advisories(kMistral).empty());
  EXPECT_EQ(Get(std::string("/api/v1/repos/") + kMistral + "/revisions").status, 404);
  ExpectError(Request(port_, "DELETE", std::string("/api/v1/repos/") + kMistral, "", Admin()), 404);
  ExpectError(Request(port_, "DELETE", "/api/v1/repos/bad--ns/x", "", Admin()), 400);
}

TEST_F(ApiTest, SubscriptionsAre503WithoutAHandler) {
  StartServer();
  HttpResponse r = Get("/api/v1/subscriptions", Admin());
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.json(), (nlohmann::json{{"error", "subscriptions are not configured"}}));
  EXPECT_EQ(Post("/api/v1/subscriptions", "{}", Admin()).status, 503);
  EXPECT_EQ(Request(port_, "DELETE", "/api/v1/subscriptions/3", "", Admin()).status, 503);
}

class FakeSubscriptions : public SubscriptionsHandler {
 public:
  void Create(const nlohmann::json& body, Done done) override {
    created = body;
    done(HttpReply::Json(201, {{"id", 7}, {"url", body.value("url", "")}}));
  }
  void List(Done done) override { done(HttpReply::Json(200, {{"subscriptions", {{{"id", 7}}}}})); }
  void Remove(const std::string& id, Done done) override {
    removed = id;
    HttpReply r;
    r.status = id == "7" ? 204 : 404;
    if (r.status == 404) r = HttpReply::Error(404, "no subscription " + id);
    done(std::move(r));
  }
  nlohmann::json created;
  std::string removed;
};

TEST_F(ApiTest, SubscriptionsGoToTheHandler) {
  FakeSubscriptions subs;
  deps_.subscriptions = &subs;
  StartServer();
  ExpectError(Post("/api/v1/subscriptions", R"({"url": "https://example.invalid/hook"})"), 401);
  HttpResponse r =
      Post("/api/v1/subscriptions", R"({"url": "https://example.invalid/hook"})", Admin());
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.json()["id"], 7);
  EXPECT_EQ(subs.created["url"], "https://example.invalid/hook");
  ExpectError(Post("/api/v1/subscriptions", "[1]", Admin()), 400);
  ExpectError(Post("/api/v1/subscriptions", "{nope", Admin()), 400);
  EXPECT_EQ(Get("/api/v1/subscriptions", Admin()).json()["subscriptions"][0]["id"], 7);
  EXPECT_EQ(Request(port_, "DELETE", "/api/v1/subscriptions/7", "", Admin()).status, 204);
  EXPECT_EQ(subs.removed, "7");
  ExpectError(Request(port_, "DELETE", "/api/v1/subscriptions/8", "", Admin()), 404);
}

}  // namespace
}  // namespace hubwatch::api::testing
