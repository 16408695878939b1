// Follow rules end to end: `hubwatch serve` over fakehub, whose owner "acme" publishes 25 repos
// of 3 commits. A rule for the owner tracks them all from their heads (one revision each, no
// advisory, a "tracked" event each) at the cost of the owner's listing pages; a repo the owner
// creates later is tracked by the next listing round and announced on the stream and the feed;
// the admin API adds, lists and removes rules; a removed rule's repos are untracked with their
// history kept; a repo two walks in a row no longer show (below a threshold) is untracked, one
// walk's miss untracks nothing; a cap counts each repo it leaves out once and is logged when it
// starts and stops leaving repos out; a repo listed in two letter cases is one repo. The
// service's time is the test's (manual_time_).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/api/http_client.h"
#include "tests/daemon/service_env.h"
#include "tests/fakehub/synthetic.h"
#include "tests/subscriptions/test_support.h"

namespace hubwatch::service::testing {
namespace {

using api::testing::HttpResponse;
using api::testing::Request;
using hubwatch::testing::WaitUntil;

constexpr int kOwned = 25;
constexpr int kPage = 10;  // the listing's page size: the walk of 25 repos reads 3 pages
constexpr const char kAdmin[] = "follow-admin-token";

class FollowTest : public ServiceTest {
 protected:
  void SetUp() override {
    manual_time_ = true;
    ServiceTest::SetUp();
    fakehub::SyntheticOptions o;
    o.repos = kOwned;
    o.commits = 3;
    o.prefix = "acme/model-";
    ASSERT_TRUE(hub_->AddRepos(fakehub::GenerateSyntheticRepos(o)).ok());
  }

  config::DaemonConfig FollowConfig(std::vector<std::string> rules) {
    config::DaemonConfig c = Config({});
    c.poll.hints = true;
    c.poll.interval_s = 60;
    c.poll.reconcile_interval_s = 3600;
    c.poll.listing_page_size = kPage;
    c.poll.api_quota = 1'000'000;
    c.poll.resolvers_quota = 1'000'000;
    c.api.admin_token_file = WriteFile("admin", kAdmin);
    for (const std::string& r : rules) {
      Result<config::FollowRule> rule =
          config::ParseFollowRule(nlohmann::json::parse(r), "test rule");
      EXPECT_TRUE(rule.ok()) << r;
      if (rule.ok()) c.follow.push_back(*rule);
    }
    return c;
  }

  HttpResponse Admin(const std::string& method, const std::string& path,
                     const std::string& body = "") {
    return Request(service_->api_port(), method, path, body,
                   {{"Authorization", std::string("Bearer ") + kAdmin},
                    {"Content-Type", "application/json"}});
  }

  // Tracked repos the rules brought, as the store says.
  int64_t Followed() {
    auto s = OpenStore();
    if (!s) return -1;
    int64_t n = 0;
    const std::vector<store::FollowRuleRecord> rules = *s->follows().ListRules();
    for (const store::FollowRuleRecord& r : rules) n += r.tracked;
    return n;
  }
  // Repos of `prefix` with exactly one revision (their baseline).
  int Baselined(const std::string& prefix) {
    auto s = OpenStore();
    if (!s) return -1;
    int n = 0;
    const std::vector<store::RepoRecord> repos = *s->repos().ListRepos();
    for (const store::RepoRecord& r : repos) {
      if (r.id.starts_with(prefix) && r.tracked && s->revisions().ListRevisions(r.id)->size() == 1)
        ++n;
    }
    return n;
  }
  size_t Advisories() {
    auto s = OpenStore();
    return s ? s->advisories().ListAdvisories({.limit = 100000})->size() : 0;
  }
  std::vector<store::FollowEvent> Events() {
    auto s = OpenStore();
    return s ? *s->follows().EventsAfter(0, 100000) : std::vector<store::FollowEvent>{};
  }
  // Listing requests fakehub answered for owner `owner` since the log was cleared.
  int OwnerListings(const std::string& owner) {
    int n = 0;
    for (const fakehub::LoggedRequest& r : hub_->RequestLog()) {
      n += r.path == "/api/models" && r.query.find("author=" + owner) != std::string::npos;
    }
    return n;
  }
  uint16_t HubPort() {
    const std::string e = hub_->endpoint();
    return static_cast<uint16_t>(std::stoi(e.substr(e.rfind(':') + 1)));
  }
  // Creates `repo` on fakehub (it did not exist): one commit with a config.json.
  void Publish(const std::string& repo, const std::string& model = "{}") {
    HttpResponse r = Request(HubPort(), "POST", "/_fakehub/repos/" + repo + "/commit",
                             R"({"files": {"config.json": "{\"model_type\": \"llama\"}"},
                                 "model": )" + model + "}");
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_EQ(r.json()["created"], true);
  }

  // The rule's last walk, as the store says (0: none, or no rule).
  int64_t WalkedAt(const std::string& rule) {
    auto s = OpenStore();
    if (!s) return -1;
    Result<std::optional<store::FollowRuleRecord>> r = s->follows().GetRule(rule);
    return r.ok() && *r ? (*r)->walked_at : 0;
  }
  // Moves the service's time past the rule's next walk (a reconcile window, 3600 s, after the
  // last) and waits until the walk is recorded, with what it tracked and untracked (the store
  // writes them first).
  void NextWalk(const std::string& rule) {
    const int64_t before = WalkedAt(rule);
    AdvanceTime(std::chrono::seconds(3660));
    ASSERT_TRUE(WaitUntil([&] { return WalkedAt(rule) > before; })) << rule;
  }
  // A commit to `repo` that sets its downloads as the listing shows them.
  void SetDownloads(const std::string& repo, int downloads) {
    static int commits = 0;
    HttpResponse r = Request(HubPort(), "POST", "/_fakehub/repos/" + repo + "/commit",
                             R"({"files": {"README.md": "commit )" + std::to_string(++commits) +
                                 R"("}, "model": {"downloads": )" + std::to_string(downloads) +
                                 "}}");
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_EQ(r.json()["created"], false);
  }
  nlohmann::json ListedRule() {
    HttpResponse list = Admin("GET", "/api/v1/follows");
    EXPECT_EQ(list.status, 200) << list.body;
    return list.status == 200 && !list.json()["follows"].empty() ? list.json()["follows"][0]
                                                                 : nlohmann::json();
  }

  // Starts the service and waits until the rules brought `n` repos, each polled once.
  void StartAndWaitForBaselines(config::DaemonConfig config, int n) {
    Start(std::move(config));
    ASSERT_TRUE(notify_.WaitFor("READY=1"));
    ASSERT_TRUE(AdvanceUntil([&] { return Followed() == n && Baselined("acme/") == n; }))
        << Followed() << " followed, " << Baselined("acme/") << " baselined";
    ASSERT_TRUE(WaitUntil([&] { return PollsRunning() == 0; }));
  }
};

TEST_F(FollowTest, ARuleTracksAnOwnersReposFromTheirHeadsWithoutAdvisories) {
  hub_->ClearLog();
  StartAndWaitForBaselines(FollowConfig({R"({"owner": "acme"})"}), kOwned);
  EXPECT_EQ(Advisories(), 0u);
  std::vector<store::FollowEvent> events = Events();
  ASSERT_EQ(events.size(), static_cast<size_t>(kOwned));
  for (const store::FollowEvent& e : events) {
    EXPECT_EQ(e.kind, "tracked");
    EXPECT_EQ(e.rule, "acme");
    EXPECT_EQ(e.sha.size(), 40u) << e.repo;  // the head the listing showed
  }
  // The walk read the owner's pages and no more: 25 repos, 10 a page.
  EXPECT_EQ(ServiceMetric("hubwatch_follow_requests_total"), 3);
  // Each repo's one revision is its head: its history was not read.
  auto s = OpenStore();
  for (const char* id : {"acme/model-00000", "acme/model-00024"}) {
    std::vector<store::RevisionRecord> revs = *s->revisions().ListRevisions(id);
    ASSERT_EQ(revs.size(), 1u) << id;
    EXPECT_EQ(*s->repos().GetRefHead(id, "main"), revs[0].sha);
    EXPECT_EQ((*s->repos().GetRepo(id))->followed_by, "acme");
  }
  HttpResponse list = Admin("GET", "/api/v1/follows");
  ASSERT_EQ(list.status, 200) << list.body;
  ASSERT_EQ(list.json()["follows"].size(), 1u);
  const nlohmann::json rule = list.json()["follows"][0];
  EXPECT_EQ(rule["name"], "acme");
  EXPECT_EQ(rule["source"], "config");
  EXPECT_EQ(rule["tracked"], kOwned);
  EXPECT_EQ(rule["listing"]["walk_requests"], 3);
  EXPECT_EQ(rule["rule"]["owner"], "acme");
}

TEST_F(FollowTest, ANewRepoIsTrackedByTheNextListingRoundAndAnnounced) {
  subscriptions::testing::Receiver receiver;
  config::DaemonConfig config = FollowConfig({R"({"owner": "acme", "match": "model-*"})"});
  const std::string secret = WriteFile("hook.secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  // One subscription asks for the "tracked" events of the fresh repos; the other, for every
  // advisory, is sent none of them.
  config.subscriptions.push_back({.url = receiver.url("/follows"),
                                  .secret_file = secret,
                                  .repos = "*fresh",
                                  .kinds = {"tracked"},
                                  .min_impact = "cosmetic"});
  config.subscriptions.push_back(
      {.url = receiver.url("/advisories"), .secret_file = secret, .min_impact = "cosmetic"});
  config.webhooks.allow_private_targets = true;
  StartAndWaitForBaselines(config, kOwned);
  api::testing::RawConnection stream(service_->api_port());
  ASSERT_TRUE(stream.Send("GET /api/v1/stream HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_NE(stream.ReadUntil([](const std::string& s) { return s.find("\r\n\r\n") != s.npos; },
                             std::chrono::seconds(10))
                .find("200"),
            std::string::npos);
  Publish("acme/model-fresh");
  Publish("acme/other-fresh");  // the rule's glob does not match it
  Publish("elsewhere/model-fresh");
  // One listing interval (60 s): its round tracks the new repo, which is polled at once.
  AdvanceTime(std::chrono::seconds(60));
  ASSERT_TRUE(WaitUntil([&] { return Followed() == kOwned + 1; }));
  ASSERT_TRUE(WaitUntil([&] { return Baselined("acme/model-fresh") == 1; }));
  const std::string got = stream.ReadUntil(
      [](const std::string& s) { return s.find("acme/model-fresh") != s.npos; },
      std::chrono::seconds(10));
  EXPECT_NE(got.find("event: tracked"), std::string::npos) << got;
  EXPECT_NE(got.find("\"rule\":\"acme/model-*\""), std::string::npos) << got;
  EXPECT_EQ(Advisories(), 0u);
  const std::string feed = Request(service_->api_port(), "GET", "/api/v1/advisories/feed.atom").body;
  EXPECT_NE(feed.find("Tracked acme/model-fresh (follow rule acme/model-*)"), std::string::npos);
  auto s = OpenStore();
  EXPECT_FALSE((*s->repos().GetRepo("acme/other-fresh")).has_value());
  EXPECT_FALSE((*s->repos().GetRepo("elsewhere/model-fresh")).has_value());
  ASSERT_TRUE(WaitUntil([&] { return !receiver.requests().empty(); }));
  const std::vector<subscriptions::testing::Receiver::Request> sent = receiver.requests();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].target, "/follows");
  const nlohmann::json event = nlohmann::json::parse(sent[0].body);
  EXPECT_EQ(event["type"], "hubwatch.follow.tracked");
  EXPECT_EQ(event["repo"], "acme/model-fresh");
  EXPECT_EQ(event["rule"], "acme/model-*");
  EXPECT_FALSE(sent[0].headers.at("webhook-signature").empty());
}

TEST_F(FollowTest, TheAdminApiAddsListsAndRemovesRulesAndHistoryIsKept) {
  Start(FollowConfig({}));
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  EXPECT_EQ(Request(service_->api_port(), "GET", "/api/v1/follows").status, 401);
  EXPECT_EQ(Admin("POST", "/api/v1/follows", R"({"owner": "acme", "max_reps": 3})").status, 400);
  HttpResponse added =
      Admin("POST", "/api/v1/follows", R"({"owner": "acme", "match": "model-0000*"})");
  ASSERT_EQ(added.status, 201) << added.body;
  EXPECT_EQ(added.json()["name"], "acme/model-0000*");
  ASSERT_TRUE(AdvanceUntil([&] { return Followed() == 10 && Baselined("acme/") == 10; }));
  ASSERT_TRUE(WaitUntil([&] { return PollsRunning() == 0; }));
  EXPECT_EQ(Admin("GET", "/api/v1/follows").json()["tracked"], 10);
  EXPECT_EQ(Admin("DELETE", "/api/v1/follows/nothing").status, 404);
  HttpResponse removed = Admin("DELETE", "/api/v1/follows/acme%2Fmodel-0000*");
  ASSERT_EQ(removed.status, 200) << removed.body;
  EXPECT_EQ(removed.json()["untracked"].size(), 10u);
  EXPECT_TRUE(Admin("GET", "/api/v1/follows").json()["follows"].empty());
  auto s = OpenStore();
  std::optional<store::RepoRecord> r = *s->repos().GetRepo("acme/model-00003");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->tracked);
  EXPECT_EQ(s->revisions().ListRevisions("acme/model-00003")->size(), 1u);
  // Untracked repos are not polled any more.
  hub_->ClearLog();
  AdvanceTime(std::chrono::seconds(7200));
  ASSERT_TRUE(WaitUntil([&] { return PollsRunning() == 0; }));
  for (const fakehub::LoggedRequest& q : hub_->RequestLog()) {
    EXPECT_EQ(q.path.find("/api/models/acme/"), std::string::npos) << q.path;
  }
}

TEST_F(FollowTest, AReloadWithoutTheRuleUntracksItsRepos) {
  std::atomic<bool> with_rule{true};
  config::DaemonConfig first = FollowConfig({R"({"owner": "acme", "match": "model-0001*"})"});
  Start(first, std::nullopt, [&]() -> Result<config::DaemonConfig> {
    return FollowConfig(with_rule ? std::vector<std::string>{
                                        R"({"owner": "acme", "match": "model-0001*"})"}
                                  : std::vector<std::string>{});
  });
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  ASSERT_TRUE(AdvanceUntil([&] { return Followed() == 10; }));
  with_rule = false;
  kill(getpid(), SIGHUP);
  ASSERT_TRUE(WaitUntil([&] { return Followed() == 0 && Events().size() == 20; }));
  for (const store::FollowEvent& e : Events()) {
    if (e.kind == "untracked") {
      EXPECT_NE(e.reason.find("removed"), std::string::npos);
    }
  }
  // The scheduler lets them go with the store: /readyz counts none, and none is polled again.
  auto readyz = [&] { return Request(service_->api_port(), "GET", "/readyz").body; };
  ASSERT_TRUE(WaitUntil([&] { return readyz().find("watching 0 repos") != std::string::npos; }))
      << readyz();
  ASSERT_TRUE(WaitUntil([&] { return PollsRunning() == 0; }));
  const size_t seen = hub_->RequestLog().size();
  for (int i = 0; i < 3; ++i) AdvanceTime(std::chrono::seconds(61));
  const std::vector<fakehub::LoggedRequest> after = hub_->RequestLog();
  for (size_t i = seen; i < after.size(); ++i) {
    EXPECT_EQ(after[i].path.find("/api/models/acme/"), std::string::npos) << after[i].path;
  }
  // The rule back tracks them again, without a restart.
  with_rule = true;
  kill(getpid(), SIGHUP);
  ASSERT_TRUE(AdvanceUntil([&] { return Followed() == 10; })) << Followed();
  EXPECT_NE(readyz().find("watching 10 repos"), std::string::npos) << readyz();
}

TEST_F(FollowTest, OneWalkMissingARepoUntracksNothingTwoInARowUntrackIt) {
  Publish("acme/popular", R"({"downloads": 500})");
  StartAndWaitForBaselines(FollowConfig({R"({"owner": "acme", "min_downloads": 100})"}), 1);
  ASSERT_TRUE(Baselined("acme/popular") == 1);
  // One walk does not show it (as a flaky page or a listing not yet consistent would not); the
  // next one shows it again: it stays tracked, nothing is announced.
  SetDownloads("acme/popular", 50);
  NextWalk("acme");
  EXPECT_EQ(Followed(), 1);
  SetDownloads("acme/popular", 500);
  NextWalk("acme");
  EXPECT_EQ(Followed(), 1);
  ASSERT_EQ(Events().size(), 1u);
  // Two walks in a row do not show it (it fell below the threshold): untracked after the second.
  SetDownloads("acme/popular", 50);
  NextWalk("acme");
  EXPECT_EQ(Followed(), 1);
  EXPECT_EQ(Events().size(), 1u);
  NextWalk("acme");
  ASSERT_TRUE(WaitUntil([&] { return Followed() == 0; }));
  std::vector<store::FollowEvent> events = Events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kind, "untracked");
  EXPECT_EQ(events[1].repo, "acme/popular");
  EXPECT_NE(events[1].reason.find("two walks in a row"), std::string::npos) << events[1].reason;
}

TEST_F(FollowTest, ACapCountsEachRepoItLeavesOutOnceAndIsLoggedWhenItStartsAndStops) {
  captured_log_ = std::make_shared<CapturedLog>();
  std::atomic<int> max_repos{20};
  auto config = [&] {
    const std::string rule = R"({"owner": "acme", "max_repos": )";
    return FollowConfig({rule + std::to_string(max_repos.load()) + "}"});
  };
  Start(config(), std::nullopt, [&]() -> Result<config::DaemonConfig> { return config(); });
  ASSERT_TRUE(notify_.WaitFor("READY=1"));
  ASSERT_TRUE(AdvanceUntil([&] { return Followed() == 20; })) << Followed();
  EXPECT_EQ(ListedRule()["capped"], 5);
  // Listing rounds and the next walk see the same 5 repos over the cap: counted once.
  for (int i = 0; i < 3; ++i) AdvanceTime(std::chrono::seconds(60));
  NextWalk("acme");
  EXPECT_EQ(Followed(), 20);
  EXPECT_EQ(ListedRule()["capped"], 5);
  EXPECT_EQ(ServiceMetric("hubwatch_follow_capped_total"), 5);
  std::vector<std::string> logged = captured_log_->Matching("follow rule \"acme\": its cap");
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("is reached (max_repos 20): 5 repo(s)"), std::string::npos)
      << logged[0];
  // Room for them all: the changed rule walks at once and takes them; said once.
  max_repos = 100;
  kill(getpid(), SIGHUP);
  ASSERT_TRUE(AdvanceUntil([&] { return Followed() == kOwned; })) << Followed();
  ASSERT_TRUE(WaitUntil([&] { return ListedRule()["capped"] == 0; })) << ListedRule();
  logged = captured_log_->Matching("follow rule \"acme\": its cap");
  ASSERT_EQ(logged.size(), 2u);
  EXPECT_NE(logged[1].find("no longer leaves any repo it matches untracked"), std::string::npos)
      << logged[1];
  EXPECT_EQ(ServiceMetric("hubwatch_follow_capped_total"), 5);
}

TEST_F(FollowTest, ARepoListedInTwoLetterCasesIsTrackedOnce) {
  // fakehub serves ids as written, so acme/Model-00003 is a repo of its own there; on the Hub it
  // is acme/model-00003. The newest listed first, its spelling is the one tracked.
  Publish("acme/Model-00003");
  StartAndWaitForBaselines(FollowConfig({R"({"owner": "acme"})"}), kOwned);
  auto s = OpenStore();
  EXPECT_TRUE((*s->repos().GetRepo("acme/Model-00003")).has_value());
  EXPECT_FALSE((*s->repos().GetRepo("acme/model-00003")).has_value());
  // A repo tracked already, listed later in other letters (the newest, so first in the listing
  // round and in the walk), is not tracked again, and the walk counts it as shown.
  Publish("acme/MODEL-00007");
  for (int i = 0; i < 3; ++i) AdvanceTime(std::chrono::seconds(60));
  NextWalk("acme");
  NextWalk("acme");
  EXPECT_EQ(Followed(), kOwned);
  EXPECT_EQ(ListedRule()["tracked"], kOwned);
  EXPECT_FALSE((*s->repos().GetRepo("acme/MODEL-00007")).has_value());
  ASSERT_TRUE((*s->repos().GetRepo("acme/model-00007")).has_value());
  EXPECT_TRUE((*s->repos().GetRepo("acme/model-00007"))->tracked);
  std::vector<store::FollowEvent> events = Events();
  EXPECT_EQ(events.size(), static_cast<size_t>(kOwned));
  for (const store::FollowEvent& e : events) EXPECT_EQ(e.kind, "tracked") << e.repo;
}

}  // namespace
}  // namespace hubwatch::service::testing
