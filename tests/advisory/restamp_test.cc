#include "tracker/advisory/restamp.h"

#include <gtest/gtest.h>

#include "tracker/advisory/time_text.h"

namespace hubwatch::advisory {
namespace {

TEST(Restamp, SetsThePublicationTimesAndKeepsTheIngestTime) {
  const nlohmann::json osv = {{"id", "x_HUBWATCH-1"},
                              {"published", "2020-01-01T00:00:00Z"},
                              {"modified", "2020-01-01T00:00:00Z"},
                              {"summary", "s"},
                              {"database_specific", {{"kind", "config"}}}};
  std::optional<nlohmann::json> out = Restamp(osv, 1700000500, 1700000000);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)["published"], Rfc3339(1700000500));
  EXPECT_EQ((*out)["modified"], Rfc3339(1700000500));
  EXPECT_EQ((*out)["database_specific"]["ingested_at"], Rfc3339(1700000000));
  EXPECT_EQ((*out)["database_specific"]["kind"], "config");
  EXPECT_EQ((*out)["summary"], "s");
  EXPECT_EQ((*out)["id"], "x_HUBWATCH-1");
}

TEST(Restamp, AddsDatabaseSpecificWhenAbsent) {
  std::optional<nlohmann::json> out = Restamp({{"id", "x"}}, 10, 5);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)["database_specific"]["ingested_at"], Rfc3339(5));
}

TEST(Restamp, RefusesWhatIsNotAnOsvRecord) {
  EXPECT_FALSE(Restamp(nlohmann::json::array(), 10, 5).has_value());
  EXPECT_FALSE(Restamp("text", 10, 5).has_value());
  EXPECT_FALSE(Restamp({{"database_specific", 3}}, 10, 5).has_value());
}

}  // namespace
}  // namespace hubwatch::advisory
