// Error mapping, faults, rate limits and backoff schedules, against fakehub with a fake clock
// and a seeded RNG: no test sleeps through a backoff.

#include <gtest/gtest.h>

#include <ctime>

#include "hubwatch/version.h"
#include "tests/estimator/gguf_writer.h"
#include "tests/hub/hub_test_env.h"
#include "tracker/hub/client.h"

namespace hubwatch::hub {
namespace {

using fakehub::FaultAction;
using fakehub::FaultRule;
using std::chrono::milliseconds;

constexpr char kToken[] = "hf_SECRETtoken1234567890";
constexpr char kF4[] = "mistralai/Mistral-7B-Instruct-v0.3";
constexpr char kR1[] = "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B";

FaultRule Fault(FaultAction action, std::string path, int times = -1) {
  FaultRule rule;
  rule.action = action;
  rule.path_regex = std::move(path);
  rule.times = times;
  return rule;
}

class FaultsTest : public HubTest {
 protected:
  void SetUp() override {
    fakehub::FakeHubOptions options;
    options.users = {{kToken, "tester", true}, {"hf_unapproved_user", "stranger", false}};
    StartHub(std::move(options));
  }
  HubClient& Client(std::string token = "") {
    HubClientOptions options;
    if (!token.empty()) options.settings.token = Secret(token);
    return MakeClient(std::move(options));
  }
  HubResult<RepoRefs> Refs(const std::string& repo, CallStats* stats = nullptr) {
    auto [r, s] = Await<RepoRefs>(io_, [&](auto cb) { client().Refs(repo, false, cb); });
    if (stats) *stats = s;
    return std::move(r);
  }
  HubResult<ResolvedFile> Head(const std::string& repo, const std::string& path,
                               const std::string& rev = "main") {
    return Await<ResolvedFile>(io_, [&](auto cb) { client().ResolveHead(repo, rev, path, cb); })
        .first;
  }
  // The delays a fresh SeededRandom(42) gives for the first n retries: the client's schedule.
  std::vector<milliseconds> ExpectedBackoff(int n) {
    SeededRandom reference(42);
    std::vector<milliseconds> out;
    for (int i = 0; i < n; ++i)
      out.push_back(FullJitterDelay(client().options().retry, i, reference));
    return out;
  }
};

TEST_F(FaultsTest, MissingRepoIs401AnonymousAnd404WithAToken) {
  Client();
  auto anonymous = Refs("nobody/nothing");
  ASSERT_FALSE(anonymous.ok());
  EXPECT_EQ(anonymous.error().kind, HubErrorKind::kNotFound);
  EXPECT_EQ(anonymous.error().http_status, 401);
  EXPECT_EQ(anonymous.error().error_message, "Invalid username or password.");
  Client(kToken);
  auto authed = Refs("nobody/nothing");
  ASSERT_FALSE(authed.ok());
  EXPECT_EQ(authed.error().kind, HubErrorKind::kNotFound);
  EXPECT_EQ(authed.error().http_status, 404);
  EXPECT_EQ(authed.error().error_code, "RepoNotFound");
  Client("hf_not_a_known_token");
  auto bad = Refs(kF4);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, HubErrorKind::kUnauthorized);
}

TEST_F(FaultsTest, RevisionEntryGatedAndDisabled) {
  Client(kToken);
  auto rev = Head(kR1, "config.json", "no-such-branch");
  ASSERT_FALSE(rev.ok());
  EXPECT_EQ(rev.error().kind, HubErrorKind::kRevisionNotFound);
  EXPECT_EQ(rev.error().error_message, "Invalid rev id: no-such-branch");
  auto entry = Head(kR1, "missing.bin");
  ASSERT_FALSE(entry.ok());
  EXPECT_EQ(entry.error().kind, HubErrorKind::kEntryNotFound);

  Client("hf_unapproved_user");
  auto gated = Head(kF4, "config.json");
  ASSERT_FALSE(gated.ok());
  EXPECT_EQ(gated.error().kind, HubErrorKind::kGatedNotApproved);
  EXPECT_EQ(gated.error().http_status, 403);
  EXPECT_NE(gated.error().error_message.find("not in the authorized list"), std::string::npos);

  ASSERT_TRUE(hub_->SetDisabled(kR1, true).ok());
  auto disabled = Head(kR1, "config.json");
  ASSERT_FALSE(disabled.ok());
  EXPECT_EQ(disabled.error().kind, HubErrorKind::kDisabled);
}

TEST_F(FaultsTest, RepoMadeGatedThenDeleted) {
  Client();
  ASSERT_TRUE(Head(kR1, "config.json").ok());
  ASSERT_TRUE(hub_->SetGated(kR1, "manual").ok());
  auto gated = Head(kR1, "config.json");
  ASSERT_FALSE(gated.ok());
  EXPECT_EQ(gated.error().kind, HubErrorKind::kGatedAnonymous);
  EXPECT_EQ(gated.error().http_status, 401);
  EXPECT_TRUE(Refs(kR1).ok()) << "the API still answers for a gated repo";
  ASSERT_TRUE(hub_->DeleteRepo(kR1).ok());
  auto gone = Refs(kR1);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().kind, HubErrorKind::kNotFound);
}

TEST_F(FaultsTest, SuperSquashRewritesMainToANewRoot) {
  Client(kToken);
  auto [before, s1] =
      Await<CommitList>(io_, [&](auto cb) { client().Commits(kF4, "main", {}, cb); });
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(before->commits.size(), 7u);
  ASSERT_TRUE(hub_->SuperSquash(kF4).ok());
  auto [after, s2] =
      Await<CommitList>(io_, [&](auto cb) { client().Commits(kF4, "main", {}, cb); });
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->commits.size(), 1u);
  EXPECT_EQ(after->commits[0].title, "Super-squash branch 'main' using huggingface_hub");
  EXPECT_NE(after->commits[0].id, before->commits[0].id);
  auto refs = Refs(kF4);
  ASSERT_TRUE(refs.ok());
  EXPECT_EQ(refs->branches[0].target_commit, after->commits[0].id);
  auto old = Head(kF4, "config.json", before->commits[0].id);
  EXPECT_TRUE(old.ok()) << "the old commit is still addressable by id (until GC)";
}

TEST_F(FaultsTest, TransientErrorsRetryWithSeededFullJitter) {
  Client();
  hub_->AddFault(Fault(FaultAction::kStatus, "/refs$", 3));
  CallStats stats;
  auto refs = Refs(kF4, &stats);
  ASSERT_TRUE(refs.ok()) << refs.error().ToString();
  EXPECT_EQ(stats.requests, 4);
  EXPECT_EQ(stats.retries, 3);
  EXPECT_EQ(clock_->waits(), ExpectedBackoff(3));
  for (size_t i = 0; i < clock_->waits().size(); ++i) {
    EXPECT_LE(clock_->waits()[i].count(), 1000ll << i);
  }
  EXPECT_EQ(client().accounting().Requests(RequestKind::kRefs, 503), 3u);
  EXPECT_EQ(client().accounting().Requests(RequestKind::kRefs, 200), 1u);
}

TEST_F(FaultsTest, PersistentFailureEndsTransientAfterMaxRetries) {
  Client();
  hub_->AddFault(Fault(FaultAction::kStatus, "/refs$"));
  CallStats stats;
  auto refs = Refs(kF4, &stats);
  ASSERT_FALSE(refs.ok());
  EXPECT_EQ(refs.error().kind, HubErrorKind::kTransient);
  EXPECT_EQ(refs.error().http_status, 503);
  EXPECT_EQ(stats.requests, 1 + client().options().retry.max_retries);
  EXPECT_EQ(clock_->waits(), ExpectedBackoff(client().options().retry.max_retries));
}

TEST_F(FaultsTest, RateLimit429WaitsForTheResetThenRetries) {
  Client();
  FaultRule rule = Fault(FaultAction::kRateLimit, "/refs$", 1);
  rule.reset_seconds = 55;
  hub_->AddFault(rule);
  CallStats stats;
  auto refs = Refs(kF4, &stats);
  ASSERT_TRUE(refs.ok()) << refs.error().ToString();
  ASSERT_EQ(clock_->waits().size(), 1u);
  EXPECT_EQ(clock_->waits()[0], milliseconds(56'000)) << "t + 1 s";
  EXPECT_EQ(stats.waited, milliseconds(56'000));
}

TEST_F(FaultsTest, RetryAfterSecondsAndHttpDate) {
  Client();
  FaultRule seconds = Fault(FaultAction::kRetryAfter, "/refs$", 1);
  seconds.retry_after = "7";
  hub_->AddFault(seconds);
  ASSERT_TRUE(Refs(kF4).ok());
  ASSERT_EQ(clock_->waits().size(), 1u);
  EXPECT_EQ(clock_->waits()[0], milliseconds(7'000));

  FaultRule date = Fault(FaultAction::kRetryAfter, "/refs$", 1);
  date.status = 503;
  const time_t later = std::chrono::system_clock::to_time_t(clock_->WallNow()) + 20;
  std::tm tm{};
  gmtime_r(&later, &tm);
  char text[64];
  std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  date.retry_after = text;
  hub_->AddFault(date);
  ASSERT_TRUE(Refs(kR1).ok());
  ASSERT_EQ(clock_->waits().size(), 2u);
  EXPECT_NEAR(static_cast<double>(clock_->waits()[1].count()), 20'000.0, 1'000.0);
}

TEST_F(FaultsTest, ServerWaitBeyondTheCapFailsRateLimitedWithResetTime) {
  Client();
  FaultRule rule = Fault(FaultAction::kRetryAfter, "/refs$");
  rule.retry_after = "3600";
  hub_->AddFault(rule);
  CallStats stats;
  auto refs = Refs(kF4, &stats);
  ASSERT_FALSE(refs.ok());
  EXPECT_EQ(refs.error().kind, HubErrorKind::kRateLimited);
  ASSERT_TRUE(refs.error().rate_limit_reset.has_value());
  EXPECT_EQ(*refs.error().rate_limit_reset - clock_->WallNow(), std::chrono::seconds(3600));
  EXPECT_EQ(stats.requests, 1);
  EXPECT_TRUE(clock_->waits().empty());
}

TEST_F(FaultsTest, ExhaustedBucketPausesEveryRequestInIt) {
  hub_.reset();
  fakehub::FakeHubOptions options;
  options.api_quota = 2;
  StartHub(std::move(options));
  Client();
  clock_->on_wait = [this](milliseconds) { hub_->ResetRateLimits(); };  // the window refills
  ASSERT_TRUE(Refs(kF4).ok());
  EXPECT_TRUE(clock_->waits().empty());
  ASSERT_TRUE(Refs(kR1).ok());  // answered with r=0: the api bucket pauses
  EXPECT_TRUE(clock_->waits().empty());
  const BucketStatus api = client().bucket_status("api");
  EXPECT_EQ(api.remaining.value_or(-1), 0);
  EXPECT_EQ(api.quota.value_or(-1), 2);
  EXPECT_EQ(api.window_seconds.value_or(-1), 300);
  EXPECT_TRUE(api.paused_until.has_value());
  EXPECT_FALSE(client().bucket_status("resolvers").paused_until.has_value());
  // A resolve is another bucket: no wait.
  ASSERT_TRUE(Head(kR1, "config.json").ok());
  EXPECT_TRUE(clock_->waits().empty());
  ASSERT_TRUE(Refs(kF4).ok());  // waits for the reset before sending
  ASSERT_EQ(clock_->waits().size(), 1u);
  EXPECT_GE(clock_->waits()[0], milliseconds(290'000));
  EXPECT_LE(clock_->waits()[0], milliseconds(301'000));
  for (const auto& r : hub_->RequestLog())
    EXPECT_NE(r.status, 429) << "paused instead of hammering";
}

TEST_F(FaultsTest, TimeoutsAndResetsAreRetriedThenTransient) {
  HubClientOptions options;
  options.api_timeout = milliseconds(150);
  MakeClient(std::move(options));
  FaultRule slow = Fault(FaultAction::kDelay, "/refs$");
  slow.delay = milliseconds(1500);
  hub_->AddFault(slow);
  CallStats stats;
  auto refs = Refs(kF4, &stats);
  ASSERT_FALSE(refs.ok());
  EXPECT_EQ(refs.error().kind, HubErrorKind::kTransient);
  EXPECT_NE(refs.error().detail.find("timeout"), std::string::npos) << refs.error().detail;
  EXPECT_EQ(stats.requests, 5);
  hub_->ClearFaults();
  hub_->AddFault(Fault(FaultAction::kReset, "/refs$", 1));
  auto recovered = Refs(kR1, &stats);
  ASSERT_TRUE(recovered.ok()) << recovered.error().ToString();
  EXPECT_EQ(stats.retries, 1);
}

TEST_F(FaultsTest, ProtocolErrorsAreTyped) {
  Client(kToken);
  hub_->AddFault(Fault(FaultAction::kInvalidJson, "/refs$"));
  CallStats stats;
  auto json = Refs(kF4, &stats);
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.error().kind, HubErrorKind::kProtocol);
  EXPECT_NE(json.error().detail.find("not valid JSON"), std::string::npos);
  EXPECT_EQ(stats.requests, 1) << "bad JSON is not retried";

  hub_->AddFault(Fault(FaultAction::kTruncate, "/commits/"));
  auto [cut, s2] = Await<CommitList>(io_, [&](auto cb) { client().Commits(kF4, "main", {}, cb); });
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().kind, HubErrorKind::kProtocol);
  EXPECT_NE(cut.error().detail.find("truncated"), std::string::npos) << cut.error().detail;

  hub_->AddFault(Fault(FaultAction::kWrongLength, "/api/resolve-cache/"));
  auto [wrong, s3] = Await<FileContent>(
      io_, [&](auto cb) { client().ResolveGet(kF4, "main", "config.json", cb); });
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().kind, HubErrorKind::kProtocol);
  EXPECT_NE(wrong.error().detail.find("wrong length"), std::string::npos) << wrong.error().detail;
}

// An API call redirected to another host is refused, not followed: no request (and no token)
// goes to the other host, and the error names it. Same-origin redirects (renames) still work.
TEST_F(FaultsTest, AnApiRedirectToAnotherHostIsNotFollowed) {
  Client(kToken);
  hub_->AddFault(Fault(FaultAction::kRedirectOffHost, "/refs$"));
  CallStats stats;
  auto refs = Refs(kF4, &stats);
  ASSERT_FALSE(refs.ok());
  EXPECT_EQ(refs.error().kind, HubErrorKind::kProtocol);
  EXPECT_NE(refs.error().detail.find("redirected to another host"), std::string::npos)
      << refs.error().detail;
  EXPECT_NE(refs.error().detail.find(hub_->cdn_endpoint()), std::string::npos)
      << refs.error().detail;
  EXPECT_EQ(stats.requests, 1);
  EXPECT_EQ(stats.redirects, 0);
  for (const auto& r : hub_->RequestLog()) EXPECT_NE(r.server, "cdn") << r.path;
  hub_->ClearFaults();
  EXPECT_TRUE(Refs(kF4).ok());
}

TEST_F(FaultsTest, HugeSafetensorsHeaderClaimIsRefused) {
  Client(kToken);
  hub_->AddFault(Fault(FaultAction::kHugeSafetensorsHeader, "", -1));
  hub_->ClearFaults();
  FaultRule huge = Fault(FaultAction::kHugeSafetensorsHeader, "/repos/");
  huge.server = "cdn";
  hub_->AddFault(huge);
  auto [info, stats] = Await<SafetensorsHeaderInfo>(io_, [&](auto cb) {
    client().ReadSafetensorsHeader("google/gemma-2-9b-it", "main",
                                   "model-00001-of-00004.safetensors", cb);
  });
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().kind, HubErrorKind::kInvalidFile);
  EXPECT_EQ(info.error().ToString().find("protocol"), std::string::npos)
      << "a bad file is not a wire error: " << info.error().ToString();
  EXPECT_NE(info.error().detail.find("10000000000"), std::string::npos) << info.error().detail;
  EXPECT_EQ(client().accounting().Requests(RequestKind::kRangeRead), 2u)
      << "Hub hop + CDN, no second read";
}

// A .gguf whose bytes arrive intact but are not a GGUF file of a version we read is an invalid
// file, said as such: not a wire error with the 206 that carried it, and an empty file (which
// no Range from 0 can satisfy: 416) is "empty", not "range not satisfiable".
TEST_F(FaultsTest, BadGgufFilesAreInvalidFilesNotWireErrors) {
  Client(kToken);
  std::string v0 = hubwatch::testing::GgufWriter().String("general.architecture", "llama").Build();
  v0[4] = v0[5] = v0[6] = v0[7] = 0;
  ASSERT_TRUE(hub_->PushCommit("google/gemma-2-9b-it", {{"empty.gguf", ""}, {"v0.gguf", v0}},
                               "bad GGUF files")
                  .ok());
  auto read = [&](const std::string& path) {
    return Await<GgufMetadataInfo>(io_, [&](auto cb) {
             client().ReadGgufMetadata("google/gemma-2-9b-it", "main", path, cb);
           })
        .first;
  };
  HubResult<GgufMetadataInfo> empty = read("empty.gguf");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().kind, HubErrorKind::kInvalidFile);
  EXPECT_EQ(empty.error().http_status, 0);
  EXPECT_NE(empty.error().ToString().find("invalid file: the file is empty"), std::string::npos)
      << empty.error().ToString();
  HubResult<GgufMetadataInfo> version0 = read("v0.gguf");
  ASSERT_FALSE(version0.ok());
  EXPECT_EQ(version0.error().kind, HubErrorKind::kInvalidFile);
  EXPECT_NE(version0.error().ToString().find("invalid file: GGUF"), std::string::npos)
      << version0.error().ToString();
  EXPECT_NE(version0.error().detail.find("version 0"), std::string::npos);
  EXPECT_EQ(version0.error().detail.find("byte-swapped"), std::string::npos);
}

TEST_F(FaultsTest, IgnoredRangeIsCutOffNotDownloaded) {
  Client(kToken);
  FaultRule ignore = Fault(FaultAction::kIgnoreRange, "/repos/");
  ignore.server = "cdn";
  hub_->AddFault(ignore);
  auto [info, stats] = Await<SafetensorsHeaderInfo>(io_, [&](auto cb) {
    client().ReadSafetensorsHeader("google/gemma-2-9b-it", "main",
                                   "model-00002-of-00004.safetensors", cb);
  });
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().kind, HubErrorKind::kProtocol);
  EXPECT_NE(info.error().detail.find("Range was ignored"), std::string::npos)
      << info.error().detail;
  EXPECT_LT(stats.bytes_received, 1'000'000u) << "a 4.9 GB file must not be downloaded";
}

TEST_F(FaultsTest, ATokenIsNeverSentOverCleartextToAHostThatIsNotLoopback) {
  HubClientOptions options;
  options.settings.endpoint = "http://hub.invalid";  // never resolved: refused before sending
  options.settings.token = Secret(kToken);
  MakeClient(std::move(options));
  auto refs = Refs(kF4);
  ASSERT_FALSE(refs.ok());
  EXPECT_EQ(refs.error().kind, HubErrorKind::kInvalidArgument);
  EXPECT_NE(refs.error().detail.find("refused to send the Hub token over cleartext http:// to "
                                     "hub.invalid"),
            std::string::npos)
      << refs.error().detail;
  EXPECT_EQ(refs.error().ToString().find(kToken), std::string::npos);
}

TEST_F(FaultsTest, OfflineSendsNothing) {
  HubClientOptions options;
  options.settings.offline = true;
  MakeClient(std::move(options));
  auto refs = Refs(kF4);
  ASSERT_FALSE(refs.ok());
  EXPECT_EQ(refs.error().kind, HubErrorKind::kOffline);
  EXPECT_TRUE(hub_->RequestLog().empty());
  auto invalid = Refs("not a repo id");
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.error().kind, HubErrorKind::kInvalidArgument);
}

TEST_F(FaultsTest, TokenNeverInLogsOrErrorsAndUserAgentIsOurs) {
  Client(kToken);
  hub_->AddFault(Fault(FaultAction::kStatus, "/refs$"));
  auto refs = Refs(kF4);
  ASSERT_FALSE(refs.ok());
  auto missing = Head("nobody/nothing", "x");
  ASSERT_FALSE(missing.ok());
  EXPECT_FALSE(log_lines_.empty()) << "retries are logged";
  for (const std::string& line : log_lines_)
    EXPECT_EQ(line.find(kToken), std::string::npos) << line;
  EXPECT_EQ(refs.error().ToString().find(kToken), std::string::npos);
  EXPECT_EQ(refs.error().ToError().message.find(kToken), std::string::npos);
  EXPECT_EQ(missing.error().ToString().find(kToken), std::string::npos);
  EXPECT_EQ(client().accounting().Summary().find(kToken), std::string::npos);
  for (const auto& r : hub_->RequestLog()) {
    EXPECT_EQ(r.user_agent, std::string("hubwatch/") + kVersion);
    EXPECT_TRUE(r.authorization);
  }
}

TEST_F(FaultsTest, ShutdownFailsAPendingBackoff) {
  Client();
  hub_->AddFault(Fault(FaultAction::kStatus, "/refs$"));
  std::optional<HubErrorKind> kind;
  // A real-time clock would wait here; shut down while the retry is scheduled.
  client().Refs(kF4, false,
                [&](HubResult<RepoRefs> r, const CallStats&) { kind = r.error().kind; });
  while (clock_->waits().empty()) {
    io_.restart();
    io_.run_one_for(milliseconds(100));
  }
  client().Shutdown();
  io_.restart();
  io_.run_for(milliseconds(50));
  ASSERT_TRUE(kind.has_value());
  EXPECT_EQ(*kind, HubErrorKind::kShutdown);
}

}  // namespace
}  // namespace hubwatch::hub
