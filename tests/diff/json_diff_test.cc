// The semantic JSON diff and the JSON text helpers.

#include "tracker/diff/json_diff.h"

#include <gtest/gtest.h>

#include <random>

#include "tracker/diff/json_text.h"

namespace hubwatch::diff {
namespace {

using nlohmann::json;

json Parse(std::string_view text) {
  Result<json> doc = ParseJson(text);
  EXPECT_TRUE(doc.ok()) << (doc.ok() ? "" : doc.error().message);
  return doc.ok() ? *doc : json();
}

json AsPatch(const std::vector<JsonOp>& ops) {
  json patch = json::array();
  for (const JsonOp& op : ops) patch.push_back(JsonOpToJson(op));
  return patch;
}

TEST(JsonDiff, WhitespaceAndKeyOrderAreNoChange) {
  const json a = Parse(R"({"a": 1, "b": {"x": [1, 2], "y": null}})");
  const json b = Parse("{\n  \"b\": {\"y\": null,\n \"x\": [1,2]},\n  \"a\": 1\n}\n");
  EXPECT_TRUE(DiffJson(a, b).empty());
}

TEST(JsonDiff, NumbersCompareByValue) {
  EXPECT_TRUE(DiffJson(Parse(R"({"f": 8})"), Parse(R"({"f": 8.0})")).empty());
  EXPECT_EQ(DiffJson(Parse(R"({"f": 8})"), Parse(R"({"f": 8.5})")).size(), 1u);
}

TEST(JsonDiff, ScalarBecomingAListIsOneReplaceWithBothValues) {
  const std::vector<JsonOp> ops = DiffJson(Parse(R"({"eos_token_id": 128001})"),
                                           Parse(R"({"eos_token_id": [128001, 128009]})"));
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].op, JsonOpKind::kReplace);
  EXPECT_EQ(ops[0].path, "/eos_token_id");
  EXPECT_EQ(ops[0].old_value, json(128001));
  EXPECT_EQ(ops[0].new_value, json({128001, 128009}));
  EXPECT_EQ(DescribeOp(ops[0]), "eos_token_id 128001 -> [128001, 128009]");
  EXPECT_EQ(JsonOpToJson(ops[0]),
            Parse(R"({"op": "replace", "path": "/eos_token_id", "old_value": 128001,
                      "value": [128001, 128009]})"));
}

TEST(JsonDiff, ObjectsAreDiffedKeyByKey) {
  const std::vector<JsonOp> ops =
      DiffJson(Parse(R"({"r": {"type": "linear", "factor": 2.0}, "x": 1})"),
               Parse(R"({"r": {"rope_type": "linear", "factor": 4.0}})"));
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].path, "/r/factor");
  EXPECT_EQ(ops[0].op, JsonOpKind::kReplace);
  EXPECT_EQ(ops[1].path, "/r/rope_type");
  EXPECT_EQ(ops[1].op, JsonOpKind::kAdd);
  EXPECT_EQ(ops[2].path, "/r/type");
  EXPECT_EQ(ops[2].op, JsonOpKind::kRemove);
  EXPECT_EQ(ops[2].old_value, json("linear"));
  EXPECT_EQ(ops[3].path, "/x");
  EXPECT_EQ(DescribeOp(ops[2]), "r.type removed (was \"linear\")");
  EXPECT_EQ(DescribeOp(ops[1]), "r.rope_type added: \"linear\"");
}

TEST(JsonDiff, ArraysAreDiffedElementWise) {
  std::vector<JsonOp> ops = DiffJson(Parse("[1, 2, 3]"), Parse("[1, 5, 3, 4, 6]"));
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].path, "/1");
  EXPECT_EQ(ops[1].path, "/3");
  EXPECT_EQ(ops[1].op, JsonOpKind::kAdd);
  EXPECT_EQ(ops[2].path, "/4");
  ops = DiffJson(Parse("[1, 2, 3, 4]"), Parse("[1]"));
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].path, "/3");  // removed from the end so that the patch applies
  EXPECT_EQ(ops[2].path, "/1");
}

TEST(JsonDiff, PointerTokensAreEscaped) {
  const std::vector<JsonOp> ops =
      DiffJson(Parse(R"({"a/b": 1, "c~d": 1})"), Parse(R"({"a/b": 2, "c~d": 3})"));
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].path, "/a~1b");
  EXPECT_EQ(ops[1].path, "/c~0d");
  EXPECT_EQ(DisplayPointer(ops[0].path), "a/b");
}

// Random documents: the ops, applied as an RFC 6902 patch (nlohmann's implementation), turn
// the old document into the new one, and a document diffed against itself gives nothing.
json RandomValue(std::mt19937& rng, int depth) {
  const int kind = static_cast<int>(rng() % (depth > 3 ? 4 : 6));
  switch (kind) {
    case 0:
      return nullptr;
    case 1:
      return static_cast<int>(rng() % 5);
    case 2:
      return std::string(1, static_cast<char>('a' + rng() % 3));
    case 3:
      return rng() % 2 == 0;
    case 4: {
      json array = json::array();
      for (unsigned i = rng() % 4; i > 0; --i) array.push_back(RandomValue(rng, depth + 1));
      return array;
    }
    default: {
      json object = json::object();
      for (unsigned i = rng() % 4; i > 0; --i) {
        object[std::string(1, static_cast<char>('k' + rng() % 4))] = RandomValue(rng, depth + 1);
      }
      return object;
    }
  }
}

TEST(JsonDiff, OpsApplyAsAnRfc6902Patch) {
  std::mt19937 rng(42);
  int changed = 0;
  for (int i = 0; i < 2000; ++i) {
    const json before = RandomValue(rng, 0);
    const json after = RandomValue(rng, 0);
    const std::vector<JsonOp> ops = DiffJson(before, after);
    EXPECT_EQ(ops.empty(), before == after);
    changed += ops.empty() ? 0 : 1;
    EXPECT_EQ(before.patch(AsPatch(ops)), after)
        << before << " -> " << after << ": " << AsPatch(ops);
    EXPECT_TRUE(DiffJson(after, after).empty());
  }
  EXPECT_GT(changed, 1000);
}

TEST(JsonText, ParseErrorsAreOneLineValues) {
  Result<json> doc = ParseJson(R"({"a": 1,})");
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.error().message.find("invalid JSON"), std::string::npos) << doc.error().message;
  EXPECT_EQ(doc.error().message.find('\n'), std::string::npos);
  doc = ParseJson(std::string(100000, '['));
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.error().message, "JSON nested deeper than 256 levels");
  EXPECT_TRUE(ParseJson(std::string(200, '[') + std::string(200, ']')).ok());
  EXPECT_FALSE(ParseJson("").ok());
  EXPECT_FALSE(ParseJson("\"\xff\"").ok());  // not UTF-8
}

TEST(JsonText, ShortJsonCutsLongValues) {
  EXPECT_EQ(ShortJson(json::parse(R"({"b": [1, 2], "a": "x"})")), R"({"a": "x", "b": [1, 2]})");
  const std::string cut = ShortJson(json(std::string(100, 'x')), 20);
  EXPECT_EQ(cut.size(), 20u);
  EXPECT_EQ(cut.substr(17), "...");
  // A cut inside a multi-byte character drops the whole character.
  EXPECT_EQ(CutText("ab\xc3\xa9\xc3\xa9xyz", 6), "ab...");
  EXPECT_EQ(CutText("ab\xc3\xa9\xc3\xa9xyz", 7), "ab\xc3\xa9...");
  EXPECT_EQ(CutText("short", 7), "short");
}

TEST(JsonText, OneLineEscapesControlCharacters) {
  EXPECT_EQ(OneLine("a\nb\tc\r\x01"), "a\\nb\\tc\\r\\x01");
  EXPECT_EQ(OneLine("ok \xc4\xa0"), "ok \xc4\xa0");
  EXPECT_EQ(OneLine("bad \xff"), "bad \xef\xbf\xbd");
  EXPECT_EQ(JoinSummary({"key\nwith newline"}), "key\\nwith newline");
}

TEST(JsonText, DisplayPointer) {
  EXPECT_EQ(DisplayPointer(""), "(root)");
  EXPECT_EQ(DisplayPointer("/rope_scaling/rope_type"), "rope_scaling.rope_type");
  EXPECT_EQ(DisplayPointer("/eos_token_id/1"), "eos_token_id[1]");
  EXPECT_EQ(DisplayPointer("/a~1b/c~0d"), "a/b.c~d");
}

TEST(JsonText, JoinSummaryCountsWhatItLeavesOut) {
  EXPECT_EQ(JoinSummary({"a", "b"}), "a; b");
  EXPECT_EQ(JoinSummary({std::string(15, 'a'), std::string(15, 'b'), "c"}, 20),
            std::string(15, 'a') + "; +2 more");
  EXPECT_EQ(JoinSummary({std::string(30, 'a')}, 10), "aaaaaaa...");
}

}  // namespace
}  // namespace hubwatch::diff
