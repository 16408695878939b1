#include <gtest/gtest.h>

#include "tracker/diff/change.h"

namespace hubwatch::diff {
namespace {

TEST(Impact, ParseImpactReadsBackEveryImpactName) {
  for (Impact i : {Impact::kCosmetic, Impact::kBehavioral, Impact::kBreaking}) {
    EXPECT_EQ(ParseImpact(ImpactName(i)), i) << ImpactName(i);
  }
  EXPECT_EQ(ParseImpact("breaking"), Impact::kBreaking);
}

TEST(Impact, ParseImpactRefusesUnknownNames) {
  for (const char* name : {"", "severe", "Breaking", "breaking ", "cosmetic\n"}) {
    EXPECT_FALSE(ParseImpact(name).has_value()) << name;
  }
}

}  // namespace
}  // namespace hubwatch::diff
