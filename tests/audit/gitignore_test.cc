#include "daemon/audit/gitignore.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace hubwatch::audit {
namespace {

using V = IgnoreRules::Verdict;

TEST(Gitignore, CommonPatterns) {
  IgnoreRules r = IgnoreRules::Parse(
      "# comment\n"
      "*.log\n"
      "build/\n"
      "/anchored.py\n"
      "**/cache\n"
      "docs/*.md\n"
      "a/**/z.py\n"
      "data[0-9].json\n"
      "\\#literal\n"
      "!keep.log\n");
  EXPECT_EQ(r.Match("x.log", false), V::kIgnore);
  EXPECT_EQ(r.Match("deep/er/x.log", false), V::kIgnore);
  EXPECT_EQ(r.Match("keep.log", false), V::kInclude);
  EXPECT_EQ(r.Match("build", true), V::kIgnore);
  EXPECT_EQ(r.Match("src/build", true), V::kIgnore);
  EXPECT_EQ(r.Match("build", false), V::kNoMatch);  // dir/ only matches directories
  EXPECT_EQ(r.Match("anchored.py", false), V::kIgnore);
  EXPECT_EQ(r.Match("sub/anchored.py", false), V::kNoMatch);
  EXPECT_EQ(r.Match("cache", true), V::kIgnore);
  EXPECT_EQ(r.Match("x/y/cache", true), V::kIgnore);
  EXPECT_EQ(r.Match("docs/a.md", false), V::kIgnore);
  EXPECT_EQ(r.Match("docs/sub/a.md", false), V::kNoMatch);
  EXPECT_EQ(r.Match("a/z.py", false), V::kIgnore);
  EXPECT_EQ(r.Match("a/b/c/z.py", false), V::kIgnore);
  EXPECT_EQ(r.Match("data7.json", false), V::kIgnore);
  EXPECT_EQ(r.Match("dataX.json", false), V::kNoMatch);
  EXPECT_EQ(r.Match("#literal", false), V::kIgnore);
  EXPECT_EQ(r.Match("main.py", false), V::kNoMatch);
}

TEST(Gitignore, LastMatchingRuleWins) {
  IgnoreRules r = IgnoreRules::Parse("!important.py\n*.py\n");
  EXPECT_EQ(r.Match("important.py", false), V::kIgnore);
  IgnoreRules s = IgnoreRules::Parse("*.py\n!important.py\n");
  EXPECT_EQ(s.Match("important.py", false), V::kInclude);
}

TEST(Gitignore, GlobSegments) {
  EXPECT_TRUE(GlobMatchSegment("*.py", "a.py"));
  EXPECT_FALSE(GlobMatchSegment("*.py", "a.pyc"));
  EXPECT_TRUE(GlobMatchSegment("a?c", "abc"));
  EXPECT_TRUE(GlobMatchSegment("[!a]x", "bx"));
  EXPECT_FALSE(GlobMatchSegment("[!a]x", "ax"));
  EXPECT_TRUE(GlobMatchSegment("[abc", "[abc"));  // unclosed: literal
  EXPECT_TRUE(GlobMatchSegment("*", ""));
}

TEST(Gitignore, PathologicalPatternsStayFast) {
  std::string name(5000, 'a');
  std::string pattern;
  for (int i = 0; i < 200; ++i) pattern += "*a";
  pattern += "b";
  IgnoreRules r = IgnoreRules::Parse(pattern + "\n" + "**/**/**/**/**/**/**/**/x\n");
  std::string deep;
  for (int i = 0; i < 2000; ++i) deep += "d/";
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(r.Match(name, false), V::kNoMatch);
  EXPECT_EQ(r.Match(deep + "y", false), V::kNoMatch);
  EXPECT_EQ(r.Match(deep + "x", false), V::kIgnore);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start);
  EXPECT_LT(ms.count(), 5000);
}

TEST(Gitignore, RuleCountIsCapped) {
  std::string text;
  for (size_t i = 0; i < kMaxIgnoreRules + 10; ++i) text += "f" + std::to_string(i) + "\n";
  IgnoreRules r = IgnoreRules::Parse(text);
  EXPECT_EQ(r.Match("f0", false), V::kIgnore);
  EXPECT_EQ(r.Match("f" + std::to_string(kMaxIgnoreRules + 5), false), V::kNoMatch);
}

}  // namespace
}  // namespace hubwatch::audit
