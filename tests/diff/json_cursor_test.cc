// The strict JSON scanner the tokenizer engine reads large files with, and its string reader.

#include "tracker/diff/json_cursor.h"

#include <gtest/gtest.h>

#include "tracker/diff/json_string.h"

namespace hubwatch::diff {
namespace {

std::string ReadOne(std::string_view text, bool* ok) {
  JsonCursor cursor(text);
  StringArena arena;
  std::string_view out;
  *ok = cursor.ReadString(&out, &arena);
  return *ok ? std::string(out) : cursor.error();
}

TEST(JsonCursor, StringsWithoutEscapesAreViewsIntoTheText) {
  const std::string text = "  \"\xc4\xa0the\"";
  JsonCursor cursor(text);
  StringArena arena;
  std::string_view out;
  ASSERT_TRUE(cursor.ReadString(&out, &arena));
  EXPECT_EQ(out, "\xc4\xa0the");
  EXPECT_EQ(out.data(), text.data() + 3);
  EXPECT_TRUE(arena.empty());
}

TEST(JsonCursor, EscapesAreDecoded) {
  bool ok = false;
  EXPECT_EQ(ReadOne(R"("a\"b\\c\/d\n\t")", &ok), "a\"b\\c/d\n\t");
  EXPECT_TRUE(ok);
  EXPECT_EQ(ReadOne(R"("\u0120the")", &ok), "\xc4\xa0the");  // the same token as raw "Ġthe"
  EXPECT_EQ(ReadOne(R"("\ud83d\ude00")", &ok), "\xf0\x9f\x98\x80");
  EXPECT_TRUE(ok);
}

TEST(JsonCursor, MalformedStringsFail) {
  bool ok = true;
  for (std::string_view bad :
       {R"("\ud83d")", R"("\ude00")", R"("\x")", R"("\u12")", "\"abc", "\"a\nb\"", "\"\xff\"",
        "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xe2\x82\"", "abc"}) {
    const std::string message = ReadOne(bad, &ok);
    EXPECT_FALSE(ok) << bad;
    EXPECT_TRUE(message.starts_with("byte ")) << message;
  }
}

TEST(JsonString, StopsPastTheClosingQuoteOrAtTheFault) {
  StringArena arena;
  std::string_view out;
  size_t pos = 1;
  EXPECT_EQ(ReadJsonString(R"("ab" x)", &pos, &out, &arena), nullptr);
  EXPECT_EQ(out, "ab");
  EXPECT_EQ(pos, 4u);
  EXPECT_TRUE(arena.empty());

  pos = 0;
  EXPECT_EQ(ReadJsonString(R"(a\nb")", &pos, &out, &arena), nullptr);
  EXPECT_EQ(out, "a\nb");
  EXPECT_EQ(pos, 5u);
  ASSERT_EQ(arena.size(), 1u);
  EXPECT_EQ(out.data(), arena.back().data());

  pos = 0;
  out = {};
  EXPECT_STREQ(ReadJsonString(R"(a\qb")", &pos, &out, &arena), "invalid escape in a string");
  EXPECT_EQ(pos, 1u);  // the backslash
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(arena.size(), 1u);
}

TEST(JsonCursor, Integers) {
  auto read = [](std::string_view text, int64_t* value) {
    JsonCursor cursor(text);
    return cursor.ReadInt64(value);
  };
  int64_t value = 0;
  EXPECT_TRUE(read("128009", &value));
  EXPECT_EQ(value, 128009);
  EXPECT_TRUE(read("-9223372036854775808", &value));
  EXPECT_EQ(value, INT64_MIN);
  EXPECT_TRUE(read("9223372036854775807", &value));
  EXPECT_FALSE(read("9223372036854775808", &value));
  EXPECT_FALSE(read("1.5", &value));
  EXPECT_FALSE(read("1e3", &value));
  EXPECT_FALSE(read("01", &value));
  EXPECT_FALSE(read("-", &value));
  EXPECT_FALSE(read("", &value));
}

TEST(JsonCursor, Doubles) {
  double value = 0;
  JsonCursor a("-10.5e-1");
  EXPECT_TRUE(a.ReadDouble(&value));
  EXPECT_DOUBLE_EQ(value, -1.05);
  for (std::string_view bad : {"1.", ".5", "+1", "1e", "inf", "nan", "1e999"}) {
    JsonCursor cursor(bad);
    EXPECT_FALSE(cursor.ReadDouble(&value)) << bad;
  }
}

TEST(JsonCursor, SkipValueFindsTheEndOfNestedValues) {
  const std::string text = R"({"a": [1, {"b": "]}\""}], "c": null} , 5)";
  JsonCursor cursor(text);
  std::string_view raw;
  ASSERT_TRUE(cursor.SkipValue(&raw));
  EXPECT_EQ(raw, R"({"a": [1, {"b": "]}\""}], "c": null})");
  EXPECT_TRUE(cursor.Expect(','));
  ASSERT_TRUE(cursor.SkipValue(&raw));
  EXPECT_EQ(raw, "5");
  EXPECT_TRUE(cursor.AtEnd());
  for (std::string_view bad : {"[1, 2", "{\"a\": [1}", "\"abc", "tru", "]", "", "[\"\\\"]"}) {
    JsonCursor c(bad);
    EXPECT_FALSE(c.SkipValue(&raw)) << bad;
  }
  const std::string brackets(10000, '[');  // the cursor views it: it must outlive the cursor
  JsonCursor deep(brackets);
  EXPECT_FALSE(deep.SkipValue(&raw));
}

TEST(JsonCursor, ObjectsAndArrays) {
  JsonCursor cursor(R"({"a": 1, "b": [true, false]})");
  StringArena arena;
  ASSERT_TRUE(cursor.BeginObject());
  bool first = true;
  std::string_view key;
  std::vector<std::string> keys;
  while (cursor.NextMember(&first, &key, &arena)) {
    keys.emplace_back(key);
    std::string_view raw;
    ASSERT_TRUE(cursor.SkipValue(&raw));
  }
  EXPECT_FALSE(cursor.failed()) << cursor.error();
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b"}));
  for (std::string_view bad : {R"({"a": 1 "b": 2})", R"({"a": 1,})", R"({,})", R"({"a" 1})"}) {
    JsonCursor c(bad);
    ASSERT_TRUE(c.BeginObject());
    bool f = true;
    while (c.NextMember(&f, &key, &arena)) {
      std::string_view raw;
      if (!c.SkipValue(&raw)) break;
    }
    EXPECT_TRUE(c.failed()) << bad;
  }
}

TEST(JsonCursor, TheFirstFailureSticks) {
  JsonCursor cursor("x");
  EXPECT_FALSE(cursor.Expect('{'));
  const std::string first = cursor.error();
  EXPECT_EQ(first, "byte 0: expected '{'");
  EXPECT_FALSE(cursor.Expect('x'));
  EXPECT_EQ(cursor.error(), first);
}

}  // namespace
}  // namespace hubwatch::diff
