// The fault matrix, Hub side: one test per fakehub fault against the real in-process
// `hubwatch serve`. Each checks that the daemon keeps running (/healthz answers), that the
// fault is recorded (the repo's state and detail) and counted (/metrics), that nothing is lost
// (every fixture commit becomes a revision) and that it recovers once the fault ends. The
// client-level and pipeline-level behaviour of the same faults is in tests/hub and
// tests/pipeline; here is what the daemon makes of them.

#include <gtest/gtest.h>

#include <ctime>

#include "tests/faults/fault_env.h"

namespace hubwatch::service::testing {
namespace {

using fakehub::FaultAction;

// An IMF-fixdate `seconds` from now: "Sun, 06 Nov 1994 08:49:37 GMT".
std::string HttpDateIn(int seconds) {
  const std::time_t t = std::time(nullptr) + seconds;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

class HubFaultsTest : public FaultMatrixTest {
 protected:
  // The repo erroring with `detail` in its state, a failed poll counted, the API up.
  void ExpectRecordedError(const std::string& detail) {
    ASSERT_TRUE(Eventually([&] { return StateOf(kRepo) == "erroring"; })) << RepoState(kRepo);
    EXPECT_TRUE(Healthy());
    const nlohmann::json repo = RepoState(kRepo);
    EXPECT_NE(repo["state_detail"].get<std::string>().find(detail), std::string::npos) << repo;
    EXPECT_GE(repo["consecutive_errors"].get<int>(), 1);
    EXPECT_TRUE(Eventually([&] { return Metric("hubwatch_polls_total", {"error"}) >= 1; }));
  }
  // The fault ends: every commit arrives, the state is ok again, no `error` change was left.
  void ExpectRecovery() {
    hub_->ClearFaults();
    EXPECT_TRUE(AllArrived(kRepo)) << RepoState(kRepo);
    EXPECT_EQ(ErrorChanges(kRepo), 0u);
    EXPECT_FALSE(Advisories(kRepo).empty());
    EXPECT_TRUE(Healthy());
  }
  // A transient fault the client's retries absorbed: no failed poll, everything arrived.
  void ExpectAbsorbed() {
    EXPECT_TRUE(AllArrived(kRepo)) << RepoState(kRepo);
    EXPECT_EQ(ErrorChanges(kRepo), 0u);
    EXPECT_EQ(Metric("hubwatch_polls_total", {"error"}), 0);
    EXPECT_TRUE(Healthy());
  }
};

TEST_F(HubFaultsTest, ServerError5xx) {
  // Persistent 503s; Retry-After: 0 keeps the client's four retries immediate.
  fakehub::FaultRule rule = Fault(FaultAction::kRetryAfter, RefsPath(kRepo));
  rule.status = 503;
  rule.retry_after = "0";
  hub_->AddFault(rule);
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ExpectRecordedError("503");
  EXPECT_GE(Metric("hubwatch_hub_requests_total", {"kind=\"refs\"", "status=\"503\""}), 5);
  ExpectRecovery();
}

TEST_F(HubFaultsTest, ServerError5xxTransient) {
  hub_->AddFault(Fault(FaultAction::kStatus, TreePath(kRepo), 2));  // 503 twice, then fine
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ExpectAbsorbed();
  EXPECT_EQ(Metric("hubwatch_hub_requests_total", {"kind=\"tree\"", "status=\"503\""}), 2);
}

TEST_F(HubFaultsTest, RateLimited429) {
  fakehub::FaultRule rule = Fault(FaultAction::kRateLimit, RefsPath(kRepo), 1);
  rule.reset_seconds = 1;  // RateLimit: r=0;t=1 - the client pauses the bucket ~2 s
  hub_->AddFault(rule);
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  EXPECT_TRUE(Healthy());  // while the Hub calls wait
  ExpectAbsorbed();
  EXPECT_EQ(Metric("hubwatch_hub_requests_total", {"kind=\"refs\"", "status=\"429\""}), 1);
  EXPECT_GE(Metric("hubwatch_hub_wait_milliseconds_total"), 1000);
}

TEST_F(HubFaultsTest, RetryAfterHttpDate) {
  fakehub::FaultRule rule = Fault(FaultAction::kRetryAfter, RefsPath(kRepo), 1);
  rule.status = 503;
  rule.retry_after = HttpDateIn(3);  // 2-3 s ahead: a slow start still leaves >= 1 s to wait
  hub_->AddFault(rule);
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ExpectAbsorbed();
  EXPECT_EQ(Metric("hubwatch_hub_requests_total", {"kind=\"refs\"", "status=\"503\""}), 1);
  EXPECT_GE(Metric("hubwatch_hub_wait_milliseconds_total"), 900);  // the date was honoured
}

TEST_F(HubFaultsTest, HubTimeoutStall) {
  // The daemon's Hub timeouts are not configurable (30 s API calls), so this stalls a refs
  // call for 3 s: the API must stay responsive meanwhile and the poll complete after.
  fakehub::FaultRule rule = Fault(FaultAction::kDelay, RefsPath(kRepo), 1);
  rule.delay = std::chrono::milliseconds(3000);
  hub_->AddFault(rule);
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ASSERT_TRUE(Eventually([&] { return Metric("hubwatch_polls_in_flight") >= 1; }));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(Healthy());
  EXPECT_EQ(Request(port_, "GET", "/api/v1/repos").status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_TRUE(Revisions(kRepo).empty());  // still stalled
  ExpectAbsorbed();
}

// The Hub counters in /metrics are current while a poll is still running: the refs and commits
// calls of a poll stalled on its first tree read are counted before the poll ends. (Counted only
// at the end, a scrape could show a revision without the requests that fetched it.)
TEST_F(HubFaultsTest, HubCountersAreCurrentWhileAPollIsInFlight) {
  fakehub::FaultRule rule = Fault(FaultAction::kDelay, TreePath(kRepo), 1);
  rule.delay = std::chrono::milliseconds(4000);
  hub_->AddFault(rule);
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ASSERT_TRUE(
      Eventually([&] { return Metric("hubwatch_hub_requests_total", {"kind=\"commits\""}) >= 1; }));
  EXPECT_GE(Metric("hubwatch_hub_requests_total", {"kind=\"refs\"", "status=\"200\""}), 1);
  EXPECT_EQ(Metric("hubwatch_polls_total"), 0);  // the poll has not ended
  EXPECT_TRUE(Revisions(kRepo).empty());
  ExpectAbsorbed();
}

TEST_F(HubFaultsTest, ConnectionReset) {
  hub_->AddFault(Fault(FaultAction::kReset, TreePath(kRepo), 2));
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ExpectAbsorbed();
  EXPECT_GE(Metric("hubwatch_hub_requests_total", {"kind=\"tree\"", "status=\"0\""}), 1);
}

TEST_F(HubFaultsTest, TruncatedBody) {
  // A cut-short transfer is a transport error the client retries (with backoff: a persistent
  // one takes ~10 s to fail a poll, too slow here): twice, then fine.
  hub_->AddFault(Fault(FaultAction::kTruncate, TreePath(kRepo), 2));
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ExpectAbsorbed();
  EXPECT_GE(Metric("hubwatch_hub_requests_total", {"kind=\"tree\"", "status=\"0\""}), 1);
}

TEST_F(HubFaultsTest, InvalidJson) {
  hub_->AddFault(Fault(FaultAction::kInvalidJson, RefsPath(kRepo)));
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ExpectRecordedError("not valid JSON");
  ExpectRecovery();
}

TEST_F(HubFaultsTest, WrongContentLength) {
  hub_->AddFault(
      Fault(FaultAction::kWrongLength, "/api/models/" + std::string(kRepo) + "/commits/"));
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  // The body is cut at the declared length: JSON that does not parse. Before the fix in
  // tracker/hub/exchange.cc it was cached under its ETag and replayed on every 304 after.
  ExpectRecordedError("not valid JSON");
  ExpectRecovery();
}

// Bad weights headers become an `error` change of the revision, never a stuck repo nor a
// download; after the fault a new revision reads the same header fine.
class WeightsFaultsTest : public HubFaultsTest {
 protected:
  void Run(FaultAction action, const std::string& detail) {
    fakehub::FaultRule rule = Fault(action, "/repos/");  // LFS content on the CDN
    rule.server = "cdn";
    hub_->AddFault(rule);
    ASSERT_NE(StartService(FastConfig({kRepo})), 0);
    ASSERT_TRUE(AllArrived(kRepo)) << RepoState(kRepo);
    ASSERT_TRUE(Eventually([&] { return ErrorChanges(kRepo) >= 1; }));
    const HttpResponse changes =
        Request(port_, "GET", "/api/v1/repos/" + std::string(kRepo) + "/changes?kind=error");
    EXPECT_NE(changes.body.find(detail), std::string::npos) << changes.body;
    EXPECT_NE(changes.body.find(".safetensors"), std::string::npos) << changes.body;
    EXPECT_TRUE(Healthy());
    EXPECT_LT(Metric("hubwatch_hub_bytes_received_total"), 10e6) << "weights were downloaded";
    const size_t errors = ErrorChanges(kRepo);

    hub_->ClearFaults();
    ASSERT_TRUE(hub_->SuperSquash(kRepo).ok());  // a new revision with the same weights
    EXPECT_TRUE(Eventually([&] { return Revisions(kRepo).size() == FixtureCommits(kRepo) + 1; }));
    EXPECT_EQ(ErrorChanges(kRepo), errors) << "the new revision read the header";
    EXPECT_TRUE(Healthy());
  }
};

TEST_F(WeightsFaultsTest, HugeSafetensorsHeaderClaim) {
  Run(FaultAction::kHugeSafetensorsHeader, "10000000000");
}

TEST_F(WeightsFaultsTest, RangeIgnored) { Run(FaultAction::kIgnoreRange, "Range was ignored"); }

// The Hub redirects an API call to another host: not followed (nothing goes there), recorded
// as an error naming the host; the repo recovers when the redirect stops.
TEST_F(HubFaultsTest, RedirectToAnotherHost) {
  hub_->AddFault(Fault(FaultAction::kRedirectOffHost, RefsPath(kRepo)));
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ExpectRecordedError("redirected to another host");
  for (const auto& r : hub_->RequestLog()) EXPECT_NE(r.server, "cdn") << r.path;
  ExpectRecovery();
}

TEST_F(HubFaultsTest, Rename307) {
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ASSERT_TRUE(AllArrived(kRepo));
  const std::string renamed = "microsoft/Phi-3-mini-4k-instruct-renamed";
  ASSERT_TRUE(hub_->RenameRepo(kRepo, renamed).ok());  // the old id answers 307
  ASSERT_TRUE(Eventually([&] { return StateOf(kRepo) == "renamed"; })) << RepoState(kRepo);
  EXPECT_EQ(RepoState(kRepo).value("renamed_to", ""), renamed);
  EXPECT_EQ(Revisions(kRepo).size(), FixtureCommits(kRepo));  // history kept
  EXPECT_GE(Metric("hubwatch_hub_requests_total", {"status=\"307\""}), 1);
  EXPECT_TRUE(Healthy());
  ASSERT_TRUE(hub_->RenameRepo(renamed, kRepo).ok());  // renamed back: the id is served again
  EXPECT_TRUE(Eventually([&] { return StateOf(kRepo) == "ok"; }, 9)) << RepoState(kRepo);
}

TEST_F(HubFaultsTest, Gated401) {
  ASSERT_TRUE(hub_->SetGated(kRepo, "manual").ok());
  config::DaemonConfig config = FastConfig({kRepo});
  config.hub.token_file.reset();  // anonymous: a gated repo's content answers 401
  unsetenv("HF_TOKEN");
  unsetenv("HF_TOKEN_PATH");
  ASSERT_NE(StartService(config), 0);
  ASSERT_TRUE(Eventually([&] { return StateOf(kRepo) == "gated"; })) << RepoState(kRepo);
  EXPECT_GE(Metric("hubwatch_hub_requests_total", {"status=\"401\""}), 1);
  EXPECT_TRUE(Healthy());
  ASSERT_TRUE(hub_->SetGated(kRepo, std::nullopt).ok());
  EXPECT_TRUE(AllArrived(kRepo, 9)) << RepoState(kRepo);  // gated repos poll 4x slower
}

TEST_F(HubFaultsTest, Gated403) {
  fakehub::FakeHubOptions options;  // a hub where the token is not approved for gated repos
  options.fixtures_dir = std::string(HUBWATCH_FIXTURES_DIR) + "/hub";
  options.users = {{kToken, "service-tests", false}};
  auto hub = fakehub::FakeHub::Start(std::move(options));
  ASSERT_TRUE(hub.ok());
  hub_ = std::move(hub).value();
  ASSERT_TRUE(hub_->SetGated(kRepo, "manual").ok());
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ASSERT_TRUE(Eventually([&] { return StateOf(kRepo) == "gated"; })) << RepoState(kRepo);
  EXPECT_GE(Metric("hubwatch_hub_requests_total", {"status=\"403\""}), 1);
  EXPECT_TRUE(Healthy());
  ASSERT_TRUE(hub_->SetGated(kRepo, std::nullopt).ok());
  EXPECT_TRUE(AllArrived(kRepo, 9)) << RepoState(kRepo);
}

TEST_F(HubFaultsTest, RevisionVanishedRepoDeleted) {
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ASSERT_TRUE(AllArrived(kRepo));
  const std::vector<std::string> advisories = Advisories(kRepo);
  ASSERT_TRUE(hub_->DeleteRepo(kRepo).ok());
  ASSERT_TRUE(Eventually([&] { return StateOf(kRepo) == "deleted"; })) << RepoState(kRepo);
  EXPECT_GE(Metric("hubwatch_hub_requests_total", {"status=\"404\""}), 1);
  EXPECT_EQ(Revisions(kRepo).size(), FixtureCommits(kRepo));  // what was known stays
  EXPECT_EQ(Advisories(kRepo), advisories);
  EXPECT_TRUE(Healthy());
}

TEST_F(HubFaultsTest, HistorySquash) {
  ASSERT_NE(StartService(FastConfig({kRepo})), 0);
  ASSERT_TRUE(AllArrived(kRepo));
  const std::vector<std::string> before = Revisions(kRepo);
  ASSERT_TRUE(hub_->SuperSquash(kRepo).ok());  // every known revision vanishes from the Hub
  ASSERT_TRUE(Eventually([&] { return Revisions(kRepo).size() == before.size() + 1; }));
  EXPECT_TRUE(Eventually([&] { return Metric("hubwatch_history_rewrites_total") == 1; }));
  bool history = false;
  for (const auto& [kind, path] : Changes(kRepo)) history = history || kind == "history";
  EXPECT_TRUE(history);
  const std::vector<std::string> after = Revisions(kRepo);
  for (const std::string& sha : before) {  // nothing lost: the old line is kept
    EXPECT_NE(std::find(after.begin(), after.end(), sha), after.end()) << sha;
  }
  EXPECT_EQ(StateOf(kRepo), "ok");
  EXPECT_EQ(Metric("hubwatch_polls_total", {"error"}), 0);
  EXPECT_TRUE(Healthy());
}

}  // namespace
}  // namespace hubwatch::service::testing
