// The unified line diff the chat-template engine shows.

#include "tracker/diff/unified_diff.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <vector>

namespace hubwatch::diff {
namespace {

// Applies a unified diff to `before`, checking every context and removed line against it.
// Returns nullopt when the diff does not apply.
std::optional<std::string> Apply(const std::string& before, const std::string& diff) {
  std::vector<std::string> lines;  // with their newline, if any
  for (size_t start = 0; start < before.size();) {
    size_t end = before.find('\n', start);
    end = end == std::string::npos ? before.size() : end + 1;
    lines.push_back(before.substr(start, end - start));
    start = end;
  }
  std::vector<std::string> out;
  size_t next = 0;  // next unconsumed old line
  std::istringstream in(diff);
  std::string row;
  std::getline(in, row);  // ---
  std::getline(in, row);  // +++
  std::vector<std::string> body;
  while (std::getline(in, row)) body.push_back(row);
  for (size_t r = 0; r < body.size(); ++r) {
    const std::string& line = body[r];
    const bool no_newline = r + 1 < body.size() && body[r + 1] == "\\ No newline at end of file";
    const std::string text = line.substr(1) + (no_newline ? "" : "\n");
    if (line.starts_with("@@")) {
      size_t old_start = std::stoul(line.substr(4));
      const size_t comma = line.find(',');
      const size_t plus = line.find(" +");
      const bool empty =
          comma != std::string::npos && comma < plus && line.substr(comma, 3) == ",0 ";
      const size_t first = empty ? old_start : old_start - 1;
      if (first < next || first > lines.size()) return std::nullopt;
      while (next < first) out.push_back(lines[next++]);
      continue;
    }
    if (line == "\\ No newline at end of file") continue;
    if (line[0] == '+') {
      out.push_back(text);
    } else {
      if (next >= lines.size() || lines[next] != text) return std::nullopt;
      if (line[0] == ' ') out.push_back(text);
      ++next;
    }
  }
  while (next < lines.size()) out.push_back(lines[next++]);
  std::string result;
  for (const std::string& l : out) result += l;
  return result;
}

TEST(UnifiedDiff, EqualTextsGiveNothing) {
  const UnifiedDiff diff = DiffLines("a\nb\n", "a\nb\n", "a", "b");
  EXPECT_TRUE(diff.text.empty());
  EXPECT_EQ(diff.hunks, 0u);
}

// The exact output of GNU `diff -u` on the same inputs (diffutils 3.8, timestamps removed).
TEST(UnifiedDiff, MatchesDiffU) {
  const std::string before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n";
  const std::string after = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n";
  const UnifiedDiff diff = DiffLines(before, after, "a/t", "b/t");
  EXPECT_EQ(diff.text,
            "--- a/t\n+++ b/t\n"
            "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
            "@@ -13,3 +13,4 @@\n 13\n 14\n 15\n+16\n");
  EXPECT_EQ(diff.hunks, 2u);
  EXPECT_EQ(diff.lines_added, 2u);
  EXPECT_EQ(diff.lines_removed, 1u);
  EXPECT_EQ(diff.first_added, "five");
  EXPECT_EQ(diff.first_removed, "5");
}

TEST(UnifiedDiff, SingleLinesEmptyRangesAndMissingNewlines) {
  EXPECT_EQ(DiffLines("a", "b", "x", "y").text,
            "--- x\n+++ y\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n"
            "\\ No newline at end of file\n");
  EXPECT_EQ(DiffLines("", "a\n", "x", "y").text, "--- x\n+++ y\n@@ -0,0 +1 @@\n+a\n");
  EXPECT_EQ(DiffLines("a\n", "", "x", "y").text, "--- x\n+++ y\n@@ -1 +0,0 @@\n-a\n");
  EXPECT_EQ(DiffLines("a\nb", "a\nb\n", "x", "y").text,
            "--- x\n+++ y\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
  // Context 0: an insertion after line 2 reads "-2,0".
  EXPECT_EQ(DiffLines("a\nb\nc\n", "a\nb\nX\nc\n", "x", "y", 0).text,
            "--- x\n+++ y\n@@ -2,0 +3 @@\n+X\n");
}

TEST(UnifiedDiff, CloseChangesShareAHunk) {
  // Changes 6 equal lines apart (= 2 * context) are one hunk, 7 apart two.
  const std::string six = "x\n1\n2\n3\n4\n5\n6\ny\n";
  EXPECT_EQ(DiffLines(six, "X\n1\n2\n3\n4\n5\n6\nY\n", "a", "b").hunks, 1u);
  const std::string seven = "x\n1\n2\n3\n4\n5\n6\n7\ny\n";
  EXPECT_EQ(DiffLines(seven, "X\n1\n2\n3\n4\n5\n6\n7\nY\n", "a", "b").hunks, 2u);
}

// F7: DeepSeek-R1's generation prompt now ends with <think>.
TEST(UnifiedDiff, DeepSeekThinkLine) {
  const std::string before =
      "{% for message in messages %}\n{{ message['content'] }}\n{% endfor %}\n"
      "{% if add_generation_prompt %}{{'<｜Assistant｜>'}}{% endif %}";
  const std::string after =
      "{% for message in messages %}\n{{ message['content'] }}\n{% endfor %}\n"
      "{% if add_generation_prompt %}{{'<｜Assistant｜><think>\\n'}}{% endif %}";
  const UnifiedDiff diff = DiffLines(before, after, "a", "b");
  EXPECT_EQ(diff.lines_added, 1u);
  EXPECT_EQ(diff.lines_removed, 1u);
  EXPECT_EQ(diff.first_added,
            "{% if add_generation_prompt %}{{'<｜Assistant｜><think>\\n'}}{% endif %}");
  EXPECT_EQ(Apply(before, diff.text), after);
}

// Random texts: the diff applies and is minimal enough to count right.
TEST(UnifiedDiff, RandomDiffsApply) {
  std::mt19937 rng(3);
  for (int round = 0; round < 500; ++round) {
    std::string before;
    std::string after;
    const int lines = static_cast<int>(rng() % 30);
    for (int i = 0; i < lines; ++i) {
      const std::string line(1, static_cast<char>('a' + rng() % 4));
      before += line + "\n";
      switch (rng() % 4) {
        case 0:
          break;  // dropped
        case 1:
          after += line + "\n" + static_cast<char>('a' + rng() % 4) + "\n";
          break;
        default:
          after += line + "\n";
      }
    }
    if (rng() % 3 == 0 && !after.empty()) after.pop_back();
    const UnifiedDiff diff = DiffLines(before, after, "a", "b", rng() % 4);
    EXPECT_EQ(diff.text.empty(), before == after);
    if (before == after) continue;
    EXPECT_EQ(Apply(before, diff.text), after) << before << "\n->\n" << after << "\n" << diff.text;
  }
}

TEST(UnifiedDiff, HugeRewritesFallBackToRemoveThenAdd) {
  std::string before;
  std::string after;
  for (int i = 0; i < 3000; ++i) {
    before += "old " + std::to_string(i) + "\n";
    after += "new " + std::to_string(i) + "\n";
  }
  const UnifiedDiff diff = DiffLines(before, after, "a", "b");
  EXPECT_EQ(diff.lines_removed, 3000u);
  EXPECT_EQ(diff.lines_added, 3000u);
  EXPECT_EQ(Apply(before, diff.text), after);
}

}  // namespace
}  // namespace hubwatch::diff
