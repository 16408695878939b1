// Times as text: what hubwatch writes and what it reads back (API ?since=, CLI --since, the
// Hub's commit dates).

#include "tracker/advisory/time_text.h"

#include <gtest/gtest.h>

namespace hubwatch::advisory {
namespace {

TEST(TimeText, Rfc3339RoundTrips) {
  EXPECT_EQ(Rfc3339(1733145155), "2024-12-02T13:12:35Z");
  EXPECT_EQ(Rfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(ParseTime(Rfc3339(1733145155)), 1733145155);
}

TEST(TimeText, ParsesRfc3339AndUnixSeconds) {
  EXPECT_EQ(ParseTime("1733145155"), 1733145155);
  EXPECT_EQ(ParseTime("2024-12-02T13:12:35Z"), 1733145155);
  EXPECT_EQ(ParseTime("2024-12-02T13:12:35.123Z"), 1733145155);
  EXPECT_EQ(ParseTime("2024-12-02T14:12:35+01:00"), 1733145155);
  EXPECT_EQ(ParseTime("2024-12-02"), std::nullopt);
  EXPECT_EQ(ParseTime("2024-13-02T13:12:35Z"), std::nullopt);
  EXPECT_EQ(ParseTime("2024-12-02T13:12:35Zjunk"), std::nullopt);
  EXPECT_EQ(ParseTime("yesterday"), std::nullopt);
  EXPECT_EQ(ParseTime("-5"), std::nullopt);
}

}  // namespace
}  // namespace hubwatch::advisory
