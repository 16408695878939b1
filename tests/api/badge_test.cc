// Contract tests: the shields endpoint badge and the SVG badge.

#include <cstdlib>
#include <fstream>

#include "daemon/api/api_context.h"
#include "tests/api/api_env.h"
#include "tests/api/shields_rules.h"
#include "tracker/advisory/time_text.h"

namespace hubwatch::api::testing {
namespace {

const std::string kMistralBadge = std::string("/api/v1/repos/") + kMistral + "/badge";

// Non-cosmetic changes in the revisions after revs[index] (revs newest first).
int64_t AdvisableAfter(store::Store& store, const std::vector<store::RevisionRecord>& revs,
                       size_t index, const std::string& kind = "") {
  int64_t n = 0;
  for (size_t i = 0; i < index; ++i) {
    Result<std::vector<store::ChangeRecord>> changes =
        store.revisions().ChangesOf(kMistral, revs[i].sha);
    EXPECT_TRUE(changes.ok());
    if (!changes.ok()) continue;
    for (const auto& c : changes.value()) {
      if (c.change.impact != diff::Impact::kCosmetic &&
          (kind.empty() || diff::KindName(c.change.kind) == kind)) {
        ++n;
      }
    }
  }
  return n;
}

nlohmann::json ValidBadge(const HttpResponse& r) {
  EXPECT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(r.header("cache-control"), "public, max-age=300");
  const nlohmann::json j = r.json();
  EXPECT_EQ(ShieldsEndpointProblem(j), "") << r.body;
  return j;
}

TEST_F(ApiTest, PinnedBadgeCountsTheChangesSinceThePin) {
  StartServer();
  const std::vector<store::RevisionRecord> revs = Revisions(kMistral);
  ASSERT_GE(revs.size(), 4u);
  const int64_t expected = AdvisableAfter(inspect(), revs, 3);
  ASSERT_GT(expected, 1);
  nlohmann::json j = ValidBadge(Get(kMistralBadge + "?pin=" + revs[3].sha));
  EXPECT_EQ(j["message"], std::to_string(expected) + " changes since " + revs[3].sha.substr(0, 7));
  EXPECT_EQ(j["label"], "hubwatch");
  EXPECT_TRUE(j["color"] == "orange" || j["color"] == "red");

  j = ValidBadge(Get(kMistralBadge + "?pin=" + revs[0].sha.substr(0, 7)));
  EXPECT_EQ(j["message"], "no changes since pin");
  EXPECT_EQ(j["color"], "brightgreen");

  const int64_t templates = AdvisableAfter(inspect(), revs, 3, "chat_template");
  j = ValidBadge(Get(kMistralBadge + "?pin=" + revs[3].sha + "&kind=chat_template&label=pinned"));
  EXPECT_EQ(j["message"], std::to_string(templates) + " chat template change" +
                              (templates == 1 ? "" : "s") + " since " + revs[3].sha.substr(0, 7));
  EXPECT_EQ(j["label"], "pinned");
}

TEST_F(ApiTest, KindBadgeSaysWhenItLastChanged) {
  // The server's clock: two days and an hour after the newest chat template commit.
  auto last = inspect().queries().LatestChange(kMistral, "chat_template");
  ASSERT_TRUE(last.ok() && last->has_value());
  const std::optional<int64_t> at = advisory::ParseTime((*last)->authored_at);
  ASSERT_TRUE(at.has_value()) << (*last)->authored_at;
  clock_.SetUnixSeconds(*at + 2 * 86400 + 3600);
  StartServer();
  nlohmann::json j = ValidBadge(Get(kMistralBadge + "?kind=chat_template"));
  EXPECT_EQ(j["message"], "chat template changed 2 days ago");
  EXPECT_EQ(j["color"], "orange");
  j = ValidBadge(Get(kMistralBadge + "?kind=weights"));
  EXPECT_EQ(j["message"], "no weights changes");
}

TEST_F(ApiTest, BadgeErrors) {
  StartServer();
  EXPECT_EQ(Get(kMistralBadge + "?pin=" + std::string(40, 'a')).status, 404);
  EXPECT_EQ(Get(kMistralBadge + "?pin=main").status, 400);
  EXPECT_EQ(Get(kMistralBadge + "?kind=mood").status, 400);
  EXPECT_EQ(Get(kMistralBadge + "?label=" + std::string(65, 'x')).status, 400);
  EXPECT_EQ(Get("/api/v1/repos/ns/missing/badge").status, 404);
  EXPECT_EQ(Get("/api/v1/repos/ns/missing/badge.svg").status, 404);
  EXPECT_EQ(Get("/api/v1/repos/ns/bad--id/badge").json().contains("error"), true);
}

TEST_F(ApiTest, SvgBadgeIsWellFormedAndSaysTheSame) {
  StartServer();
  const std::vector<store::RevisionRecord> revs = Revisions(kMistral);
  const std::string query = "?pin=" + revs[3].sha;
  const nlohmann::json j = Get(kMistralBadge + query).json();
  const HttpResponse svg = Get(kMistralBadge + ".svg" + query);
  ASSERT_EQ(svg.status, 200);
  EXPECT_EQ(svg.header("content-type"), "image/svg+xml; charset=utf-8");
  EXPECT_NE(svg.body.find(">" + j["message"].get<std::string>() + "<"), std::string::npos);
  EXPECT_NE(svg.body.find("<title>hubwatch: " + j["message"].get<std::string>()),
            std::string::npos);
  const std::string path = ::testing::TempDir() + "hubwatch_api_badge.svg";
  std::ofstream(path) << svg.body;
  const std::string check =
      "python3 -c 'import sys, xml.dom.minidom as m; "
      "d = m.parse(sys.argv[1]); "
      "assert d.documentElement.tagName == \"svg\"' " +
      path;
  EXPECT_EQ(std::system(check.c_str()), 0) << svg.body;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace hubwatch::api::testing
