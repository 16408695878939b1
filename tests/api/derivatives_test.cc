// Contract tests of derivatives: GET /api/v1/repos/{ns}/{name}/derivatives, the counts every
// route serving an upstream advisory's OSV record adds to it, and the ?derivatives=lagging
// badge. Derivatives are recorded straight into the fixture store (DerivativeStore).

#include "daemon/api/api_context.h"
#include "tests/api/api_env.h"
#include "tests/api/shields_rules.h"
#include "tracker/advisory/derivative_osv.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::api::testing {
namespace {

using derivatives::LagStatus;

const std::string kLlamaPath = std::string("/api/v1/repos/") + kLlama;
constexpr char kGguf[] = "someone/Llama-3-8B-Instruct-GGUF";
constexpr char kHostile[] = "mallory/<script>alert(1)</script>";
constexpr char kTune[] = "zed/llama-tune";

class DerivativesApiTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    auto fixes = inspect().derivatives().UpstreamFixes(kLlama);
    ASSERT_TRUE(fixes.ok()) << fixes.error().message;
    ASSERT_GE(fixes->size(), 2u) << "the Llama fixture has config and generation config fixes";
    fix0_ = (*fixes)[0].advisory_id;
    fix1_ = (*fixes)[1].advisory_id;
  }

  void Record(const std::string& id, std::vector<derivatives::AdvisoryLag> lags,
              const std::string& error = "") {
    derivatives::DerivativeCheck check{.upstream = kLlama,
                                       .id = id,
                                       .relation = derivatives::Relation::kQuantized,
                                       .head = std::string(40, 'a'),
                                       .checked_at = kServerNow - 60,
                                       .facets_json = "{}",
                                       .error = error,
                                       .lags = std::move(lags)};
    Status s = inspect().derivatives().RecordCheck(check, kServerNow - 60);
    ASSERT_TRUE(s.ok()) << s.error().message;
  }
  // kGguf lags on fix0 and carries fix1; kHostile carries both; kTune could not be read.
  void RecordThree() {
    Record(kGguf, {{fix0_, LagStatus::kLagging}, {fix1_, LagStatus::kFixed}});
    Record(kHostile, {{fix0_, LagStatus::kFixed}, {fix1_, LagStatus::kFixed}});
    Record(kTune, {}, "config.json: 401");
  }

  std::string fix0_, fix1_;
};

nlohmann::json ValidBadge(const HttpResponse& r) {
  EXPECT_EQ(r.status, 200) << r.raw;
  const nlohmann::json j = r.json();
  EXPECT_EQ(ShieldsEndpointProblem(j), "") << r.body;
  return j;
}

TEST_F(DerivativesApiTest, ListsEachDerivativeWithItsStatusesAndTheCounts) {
  RecordThree();
  StartServer();
  const HttpResponse r = Get(kLlamaPath + "/derivatives");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/json");
  const nlohmann::json j = r.json();
  EXPECT_EQ(j["repo"], kLlama);
  ASSERT_EQ(j["derivatives"].size(), 3u);
  // By id: the hostile one comes back as data, escaped by JSON alone.
  const nlohmann::json& hostile = j["derivatives"][0];
  EXPECT_EQ(hostile["id"], kHostile);
  const nlohmann::json& gguf = j["derivatives"][1];
  EXPECT_EQ(gguf["id"], kGguf);
  EXPECT_EQ(gguf["relation"], "quantized");
  EXPECT_EQ(gguf["head"], std::string(40, 'a'));
  EXPECT_EQ(gguf["checked_at"], advisory::Rfc3339(kServerNow - 60));
  EXPECT_FALSE(gguf.contains("error"));
  const nlohmann::json expected_lags = {
      {{"id", fix0_},
       {"status", "lagging"},
       {"derivative_advisory", advisory::DerivativeAdvisoryId(kGguf, fix0_)}},
      {{"id", fix1_}, {"status", "fixed"}}};
  nlohmann::json lags = gguf["advisories"];
  std::sort(lags.begin(), lags.end(),
            [&](const auto& a, const auto& b) { return (a["id"] == fix0_) > (b["id"] == fix0_); });
  EXPECT_EQ(lags, expected_lags);
  const nlohmann::json& tune = j["derivatives"][2];
  EXPECT_EQ(tune["error"], "config.json: 401");
  EXPECT_EQ(tune["head"], "");
  EXPECT_EQ(tune["advisories"], nlohmann::json::array());
  EXPECT_EQ(tune["status"], "unchecked") << "never read";
  EXPECT_EQ(gguf["status"], "lagging");
  EXPECT_EQ(hostile["status"], "fixed");
  EXPECT_EQ(gguf["downloads"], 0);
  EXPECT_EQ(gguf["created_at"], nullptr);
  EXPECT_EQ(j["counts"], nlohmann::json::parse(R"({"derivatives": 3, "checked": 2, "lagging": 1,
      "fixed": 1, "diverged": 0, "not_applicable": 0, "unchecked": 1})"));
  EXPECT_EQ(j["evicted"], nlohmann::json::array());
}

// Issue 28: statuses a derivative was last checked with are shown as unchecked once upstream
// publishes a newer fix, and what the rounds stopped following is listed with why.
TEST_F(DerivativesApiTest, StatusesOlderThanTheNewestFixAreUncheckedAndEvictionsAreListed) {
  RecordThree();
  derivatives::DerivativeCheck old;  // checked before any fix of the fixture was published
  old.upstream = kLlama;
  old.id = kGguf;
  old.relation = derivatives::Relation::kQuantized;
  old.head = std::string(40, 'b');
  old.checked_at = kServerNow - 30;
  old.facets_json = "{}";
  old.lags = {{fix0_, LagStatus::kFixed}, {fix1_, LagStatus::kFixed}};
  old.signals = derivatives::Signals{48210, 96, "2024-04-18T19:58:02.000Z"};
  old.fixes_through = 0;
  ASSERT_TRUE(inspect().derivatives().RecordCheck(old, kServerNow - 30).ok());
  derivatives::Eviction spam{.id = "throwaway-01/Llama-spam-00001",
                             .relation = derivatives::Relation::kAdapter,
                             .reason = derivatives::EvictionReason::kRankedOut,
                             .detail = "ranked 201st of 1206 for 200 places",
                             .signals = {0, 0, "2026-05-01T00:00:00.000Z"}};
  ASSERT_TRUE(inspect().derivatives().evictions().Evict(kLlama, {spam}, kServerNow - 10).ok());
  StartServer();
  const nlohmann::json j = Get(kLlamaPath + "/derivatives").json();
  const nlohmann::json& gguf = j["derivatives"][1];
  ASSERT_EQ(gguf["id"], kGguf);
  EXPECT_EQ(gguf["status"], "unchecked");
  EXPECT_EQ(gguf["downloads"], 48210);
  EXPECT_EQ(gguf["likes"], 96);
  EXPECT_EQ(gguf["created_at"], "2024-04-18T19:58:02.000Z");
  for (const nlohmann::json& a : gguf["advisories"]) {
    EXPECT_EQ(a["status"], "unchecked") << a.dump();
    EXPECT_EQ(a["last_status"], "fixed") << a.dump();
  }
  EXPECT_EQ(j["counts"]["checked"], 1);
  EXPECT_EQ(j["counts"]["fixed"], 1);
  EXPECT_EQ(j["counts"]["unchecked"], 2);
  const nlohmann::json evicted = {{"id", "throwaway-01/Llama-spam-00001"},
                                  {"relation", "adapter"},
                                  {"reason", "ranked_out"},
                                  {"detail", "ranked 201st of 1206 for 200 places"},
                                  {"evicted_at", advisory::Rfc3339(kServerNow - 10)},
                                  {"downloads", 0},
                                  {"likes", 0},
                                  {"created_at", "2026-05-01T00:00:00.000Z"}};
  EXPECT_EQ(j["evicted"], nlohmann::json::array({evicted}));
  // Not counted as fixed on the upstream advisory either, nor as checked by the badge.
  EXPECT_EQ(
      Get("/v1/vulns/" + fix1_).json()["database_specific"]["derivatives"],
      nlohmann::json::parse(
          R"({"fixed": 1, "lagging": 0, "diverged": 0, "not_applicable": 0, "unchecked": 1})"));
  EXPECT_EQ(Get(kLlamaPath + "/badge?derivatives=lagging").json()["message"], "0 of 1 lagging");
}

TEST_F(DerivativesApiTest, UntrackedReposAre404AndBadIds400) {
  StartServer();
  EXPECT_EQ(Get("/api/v1/repos/ns/unknown/derivatives").status, 404);
  EXPECT_EQ(Get("/api/v1/repos/ns/bad%20name/derivatives").status, 400);
  const HttpResponse none = Get(std::string("/api/v1/repos/") + kMistral + "/derivatives");
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_EQ(none.json()["derivatives"], nlohmann::json::array());
  EXPECT_EQ(none.json()["counts"]["derivatives"], 0);
}

TEST_F(DerivativesApiTest, UpstreamRecordsCarryTheirDerivativeCountsWhereverServed) {
  RecordThree();
  StartServer();
  const nlohmann::json counts0 = {
      {"fixed", 1}, {"lagging", 1}, {"diverged", 0}, {"not_applicable", 0}, {"unchecked", 0}};
  const nlohmann::json counts1 = {
      {"fixed", 2}, {"lagging", 0}, {"diverged", 0}, {"not_applicable", 0}, {"unchecked", 0}};
  // One record.
  const HttpResponse one = Get("/v1/vulns/" + fix0_);
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.json()["database_specific"]["derivatives"], counts0);
  EXPECT_EQ(one.json()["database_specific"]["repo"], kLlama);  // the rest is as stored
  EXPECT_EQ(Get("/v1/vulns/" + fix1_).json()["database_specific"]["derivatives"], counts1);
  // Not stored: the store's record has no counts.
  auto stored = inspect().advisories().GetAdvisory(fix0_);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_FALSE((*stored)->osv["database_specific"].contains("derivatives"));
  // The osv.dev query.
  const nlohmann::json q =
      Post("/v1/query", nlohmann::json{{"package", {{"name", kLlama}}}}.dump()).json();
  size_t with_counts = 0;
  for (const nlohmann::json& v : q["vulns"]) {
    if (v["id"] == fix0_) {
      EXPECT_EQ(v["database_specific"]["derivatives"], counts0);
    }
    if (v["id"] != fix0_ && v["id"] != fix1_) {
      EXPECT_FALSE(v["database_specific"].contains("derivatives")) << v["id"];
    }
    with_counts += v["database_specific"].contains("derivatives");
  }
  EXPECT_EQ(with_counts, 2u);
  // The JSON feed's entries.
  const nlohmann::json list =
      Get(std::string("/api/v1/advisories?repo=") + kLlama + "&limit=1000").json();
  with_counts = 0;
  for (const nlohmann::json& a : list["advisories"]) {
    if (a["id"] == fix1_) {
      EXPECT_EQ(a["derivatives"], counts1);
    }
    with_counts += a.contains("derivatives");
  }
  EXPECT_EQ(with_counts, 2u);
  // The derivative's own advisory is served as stored: lagging, no counts of its own.
  const HttpResponse own = Get("/v1/vulns/" + advisory::DerivativeAdvisoryId(kGguf, fix0_));
  ASSERT_EQ(own.status, 200) << own.body;
  EXPECT_EQ(own.json()["database_specific"]["status"], "lagging");
  EXPECT_EQ(own.json()["related"], nlohmann::json::array({fix0_}));
  EXPECT_FALSE(own.json()["database_specific"].contains("derivatives"));
}

TEST_F(DerivativesApiTest, TheLaggingBadgeCountsTheDerivativesThatLag) {
  StartServer();
  const std::string badge = kLlamaPath + "/badge?derivatives=lagging";
  nlohmann::json j = ValidBadge(Get(badge));
  EXPECT_EQ(j["message"], "no derivatives checked");
  EXPECT_EQ(j["label"], "derivatives");

  RecordThree();
  j = ValidBadge(Get(badge));
  EXPECT_EQ(j["message"], "1 of 2 lagging") << "the one never read is not checked";
  EXPECT_EQ(j["color"], "orange");
  j = ValidBadge(Get(badge + "&label=forks"));
  EXPECT_EQ(j["label"], "forks");
  const HttpResponse svg = Get(kLlamaPath + "/badge.svg?derivatives=lagging");
  ASSERT_EQ(svg.status, 200);
  EXPECT_NE(svg.body.find("1 of 2 lagging"), std::string::npos) << svg.body;

  Record(kGguf, {{fix0_, LagStatus::kFixed}, {fix1_, LagStatus::kFixed}});
  j = ValidBadge(Get(badge));
  EXPECT_EQ(j["message"], "0 of 2 lagging");
  EXPECT_EQ(j["color"], "brightgreen");

  EXPECT_EQ(Get(kLlamaPath + "/badge?derivatives=all").status, 400);
  EXPECT_EQ(Get(badge + "&kind=config").status, 400);
  EXPECT_EQ(Get(badge + "&pin=" + Revisions(kLlama).front().sha).status, 400);
  EXPECT_EQ(Get("/api/v1/repos/ns/unknown/badge?derivatives=lagging").status, 404);
}

}  // namespace
}  // namespace hubwatch::api::testing
