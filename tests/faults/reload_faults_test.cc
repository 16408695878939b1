// The fault matrix, operator side: the configuration file rewritten under a running daemon and
// SIGHUP. A configuration a start would refuse (a bad `listen`, the store in a missing
// directory, a missing token or admin token file, a number out of range) is rejected whole: the
// daemon keeps running on the old one, says why, and counts it; a good one is applied whole,
// and the repos it no longer lists stop being polled.

#include <signal.h>

#include <algorithm>

#include "tests/faults/fault_env.h"

namespace hubwatch::service::testing {
namespace {

constexpr const char kOther[] = "google/gemma-7b-it";
constexpr const char kAdminToken[] = "admin-token-for-reload-tests";

class ReloadFaultsTest : public FaultMatrixTest {
 protected:
  void SetUp() override {
    FaultMatrixTest::SetUp();
    captured_log_ = std::make_shared<CapturedLog>();
  }

  // A FastConfig-like configuration for `repos` as JSON; `extra` replaces top-level keys.
  nlohmann::json ConfigJson(const std::vector<std::string>& repos,
                            const nlohmann::json& extra = nlohmann::json::object()) {
    nlohmann::json j = {{"store", dir_ + "/hubwatch.db"},
                        {"hub", {{"endpoint", hub_->endpoint()}, {"token_file", dir_ + "/token"}}},
                        {"listen", "127.0.0.1:0"},
                        {"admin_token_file", dir_ + "/admin.token"},
                        {"poll", {{"interval_s", 1}, {"settle_window_s", 0}, {"hints", "off"}}},
                        {"repos", nlohmann::json::array()}};
    for (const std::string& r : repos) j["repos"].push_back({{"id", r}});
    for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
    return j;
  }

  // Starts the service on dir_/hubwatch.json holding ConfigJson(repos); SIGHUP re-reads it.
  uint16_t StartFromFile(const std::vector<std::string>& repos) {
    WriteFile("admin.token", kAdminToken);
    Result<config::DaemonConfig> config =
        config::LoadConfig(WriteFile("hubwatch.json", ConfigJson(repos).dump()));
    EXPECT_TRUE(config.ok()) << config.error().message;
    return config.ok() ? StartService(*config) : 0;
  }

  // Rewrites the file, sends SIGHUP, and waits until the reload has been counted.
  bool Reload(const std::string& text) {
    WriteFile("hubwatch.json", text);
    const double before = Metric("hubwatch_config_reloads_total");
    kill(getpid(), SIGHUP);
    return Eventually([&] { return Metric("hubwatch_config_reloads_total") > before; });
  }
  double Reloads(const std::string& result) const {
    return Metric("hubwatch_config_reloads_total", {"result=\"" + result + "\""});
  }
  std::string LastRejection() {
    const std::vector<std::string> lines = captured_log_->Matching("reload rejected");
    return lines.empty() ? "" : lines.back();
  }

  std::vector<std::string> TrackedIds() const {
    const HttpResponse r = Request(port_, "GET", "/api/v1/repos");
    std::vector<std::string> ids;
    if (r.status != 200) return ids;
    const nlohmann::json body = r.json();
    for (const nlohmann::json& j : body["repos"]) ids.push_back(j["id"]);
    return ids;
  }
  size_t HubRequestsFor(const std::string& repo) const {
    const std::vector<fakehub::LoggedRequest> log = hub_->RequestLog();
    return static_cast<size_t>(std::count_if(log.begin(), log.end(), [&](const auto& r) {
      return r.path.find("/" + repo + "/") != std::string::npos;
    }));
  }
};

TEST_F(ReloadFaultsTest, ABadConfigOverSighupIsRejectedWholeAndTheDaemonKeepsRunning) {
  ASSERT_NE(StartFromFile({kRepo}), 0);
  ASSERT_TRUE(AllArrived(kRepo));
  const std::vector<std::pair<nlohmann::json, std::string>> bad = {
      {{{"listen", "garbage"}}, "listen must be HOST:PORT"},
      {{{"store", dir_ + "/missing/hubwatch.db"}}, "does not exist"},
      {{{"hub", {{"endpoint", hub_->endpoint()}, {"token_file", dir_ + "/none"}}}},
       "hub.token_file"},
      {{{"admin_token_file", dir_ + "/none"}}, "admin_token_file"},
  };
  double rejected = 0;
  for (const auto& [extra, why] : bad) {
    // Each also adds a repo: none of it may be applied.
    ASSERT_TRUE(Reload(ConfigJson({kRepo, kOther}, extra).dump())) << why;
    EXPECT_EQ(Reloads("rejected"), ++rejected) << why;
    EXPECT_NE(LastRejection().find(why), std::string::npos) << LastRejection();
    EXPECT_TRUE(Healthy());
    EXPECT_EQ(TrackedIds(), std::vector<std::string>{kRepo}) << why;
  }
  EXPECT_TRUE(captured_log_->Matching("reloaded").empty());
  EXPECT_EQ(Reloads("applied"), 0);
  // Fixed, the same file is applied whole: the added repo arrives.
  ASSERT_TRUE(Reload(ConfigJson({kRepo, kOther}).dump()));
  EXPECT_EQ(Reloads("applied"), 1);
  EXPECT_TRUE(AllArrived(kOther, 15)) << RepoState(kOther);
  EXPECT_EQ(StateOf(kRepo), "ok");
}

TEST_F(ReloadFaultsTest, AnOverflowingNumberOverSighupIsRejected) {
  ASSERT_NE(StartFromFile({kRepo}), 0);
  std::string text = ConfigJson({kRepo}).dump();
  for (const char* number : {"1e999", "-1e400"}) {
    const std::string with =
        text.substr(0, text.size() - 1) + R"(, "api": {"read_timeout_s": )" + number + "}}";
    ASSERT_TRUE(Reload(with)) << number;
    EXPECT_NE(LastRejection().find("not valid JSON"), std::string::npos) << LastRejection();
    EXPECT_TRUE(Healthy());
  }
  EXPECT_EQ(Reloads("rejected"), 2);
  EXPECT_TRUE(AllArrived(kRepo));
}

TEST_F(ReloadFaultsTest, ARemovedRepoStopsBeingPolledAndAnApiRepoStays) {
  ASSERT_NE(StartFromFile({kRepo, kOther}), 0);
  ASSERT_TRUE(AllArrived(kRepo));
  ASSERT_TRUE(AllArrived(kOther));
  const std::string api_repo = "google/gemma-2-9b-it";
  const api::testing::Headers admin = {{"Authorization", std::string("Bearer ") + kAdminToken}};
  ASSERT_EQ(
      Request(port_, "POST", "/api/v1/repos", R"({"id": "google/gemma-2-9b-it"})", admin).status,
      201);
  ASSERT_TRUE(Reload(ConfigJson({kRepo}).dump()));
  EXPECT_EQ(Reloads("applied"), 1);
  EXPECT_EQ(TrackedIds(), (std::vector<std::string>{api_repo, kRepo}));
  EXPECT_TRUE(notify_.WaitFor("STATUS=watching 2 repos"));
  EXPECT_EQ(captured_log_->Matching(std::string(kOther) + ": untracked").size(), 1u);
  // Polls go on (every second) and none is for the removed repo.
  const size_t requests = HubRequestsFor(kOther);
  const double polls = Metric("hubwatch_polls_total");
  EXPECT_TRUE(Eventually([&] { return Metric("hubwatch_polls_total") >= polls + 4; }));
  EXPECT_EQ(HubRequestsFor(kOther), requests);
  EXPECT_TRUE(AllArrived(api_repo));
}

}  // namespace
}  // namespace hubwatch::service::testing
