#include "estimator/base/json_nesting.h"

#include <gtest/gtest.h>

#include <string>

#include "estimator/estimate.h"
#include "estimator/formats/safetensors_header.h"

namespace hubwatch {
namespace {

std::string Nested(size_t depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

TEST(JsonNesting, CountsArraysAndObjectsUpToTheLimit) {
  EXPECT_FALSE(JsonNestsDeeperThan("{}", 1));
  EXPECT_TRUE(JsonNestsDeeperThan("{\"a\": []}", 1));
  EXPECT_FALSE(JsonNestsDeeperThan(Nested(64)));
  EXPECT_TRUE(JsonNestsDeeperThan(Nested(65)));
  EXPECT_FALSE(JsonNestsDeeperThan("[[1], [2], [3], {\"a\": 1}]", 2));  // siblings, not depth
  EXPECT_TRUE(JsonNestsDeeperThan(std::string(4 << 20, '[')));          // unterminated
}

TEST(JsonNesting, BracketsInsideStringsDoNotCount) {
  EXPECT_FALSE(JsonNestsDeeperThan("[\"[[[[{{{{\"]", 1));
  EXPECT_FALSE(JsonNestsDeeperThan("[\"a\\\"[[[[\"]", 1));   // an escaped quote keeps the string
  EXPECT_TRUE(JsonNestsDeeperThan("[\"a\\\\\", [[]]]", 2));  // an escaped backslash ends it
}

TEST(JsonValues, CountsElementsMembersAndContainersOutsideStrings) {
  EXPECT_FALSE(JsonHasMoreValuesThan("0", 1));
  EXPECT_FALSE(JsonHasMoreValuesThan("[1,2,3]", 4));  // the array and its three elements
  EXPECT_TRUE(JsonHasMoreValuesThan("[1,2,3]", 3));
  EXPECT_FALSE(JsonHasMoreValuesThan(R"({"a": "x,y,[z{", "b": [1]})", 4));
  EXPECT_TRUE(JsonHasMoreValuesThan(R"({"a": "x,y,[z{", "b": [1, 2]})", 4));
  std::string zeros = "[";
  for (int i = 0; i < 100'000; ++i) zeros += "0,";
  zeros += "0]";
  EXPECT_TRUE(JsonHasMoreValuesThan(zeros, 65536));
}

TEST(JsonValues, TopLevelMembersCountOnlyTheOutermostCommas) {
  EXPECT_FALSE(JsonHasMoreTopLevelMembersThan(R"({"a": [1, 2, 3], "b": {"c": 1, "d": 2}})", 2));
  EXPECT_TRUE(JsonHasMoreTopLevelMembersThan(R"({"a": 1, "b": 2, "c": 3})", 2));
  EXPECT_FALSE(JsonHasMoreTopLevelMembersThan(R"({"a,b,c": "x,y", "d": 1})", 2));
}

// A header of a million one-element tensors (55 MB, under the 100 MB byte cap) is refused by
// its count before nlohmann builds a node for each of them.
TEST(JsonValues, ASafetensorsHeaderOfAMillionTensorsIsRefusedBeforeParsing) {
  std::string header = "{";
  for (int i = 0; i < 1'000'000; ++i) {
    if (i) header += ',';
    header += "\"t" + std::to_string(i) + "\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[" +
              std::to_string(i) + "," + std::to_string(i + 1) + "]}";
  }
  header += "}";
  Result<SafetensorsHeader> parsed = ParseSafetensorsHeader(header, std::nullopt);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message,
            "safetensors header: holds more than 400000 tensors, more than any released checkpoint");
}

TEST(JsonNesting, ConfigAndSafetensorsHeaderRefuseDeepDocuments) {
  const std::string deep = "{\"a\": " + Nested(80) + "}";
  Result<Estimate> estimate = EstimateModelFromText(deep, EstimateInput{});
  ASSERT_FALSE(estimate.ok());
  EXPECT_NE(estimate.error().message.find("nested deeper than 64 levels"), std::string::npos)
      << estimate.error().message;
  Result<SafetensorsHeader> header = ParseSafetensorsHeader(deep, std::nullopt);
  ASSERT_FALSE(header.ok());
  EXPECT_NE(header.error().message.find("nested deeper than 64 levels"), std::string::npos)
      << header.error().message;
}

}  // namespace
}  // namespace hubwatch
