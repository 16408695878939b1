#include "estimator/formats/safetensors_header.h"

#include <gtest/gtest.h>

namespace hubwatch {
namespace {

TEST(SafetensorsHeader, ParsesValidHeader) {
  Result<SafetensorsHeader> h = ParseSafetensorsHeader(
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"F32","shape":[2,3],"data_offsets":[8,32]},)"
      R"("a":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}}   )");
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->tensors.size(), 2u);
  EXPECT_EQ(h->tensors.at("b").elements, 6u);
  EXPECT_EQ(h->metadata.at("format"), "pt");
  EXPECT_EQ(h->data_size, 32u);
}

TEST(SafetensorsHeader, RejectsWhatTheFormatForbids) {
  struct Case {
    const char* header;
    const char* message;
  };
  for (const Case& c : {
           Case{R"([1,2])", "does not start with '{'"},
           Case{R"({"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}})", "unknown dtype"},
           Case{R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "negative"},
           Case{R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "need 8"},
           Case{R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", "(gap)"},
           Case{R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                R"("b":{"dtype":"F32","shape":[2],"data_offsets":[2,10]}})",
                "(overlap)"},
           Case{R"({"__metadata__":{"x":1}})", "is not a string"},
           Case{R"({"a":{"dtype":"F32","shape":[1]}})", "data_offsets"},
           Case{R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", "sub-byte"},
           Case{R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,4]}})",
                "too large"},
           Case{R"({"a":)", "invalid JSON"},
       }) {
    SCOPED_TRACE(c.header);
    Result<SafetensorsHeader> h = ParseSafetensorsHeader(c.header);
    ASSERT_FALSE(h.ok());
    EXPECT_NE(h.error().message.find(c.message), std::string::npos) << h.error().message;
  }
}

TEST(SafetensorsHeader, LengthPrefixIsCheckedAgainstTheLimit) {
  auto prefix = [](uint64_t n) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i)
      s[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
    return s;
  };
  EXPECT_EQ(*ReadSafetensorsHeaderLength(prefix(1234)), 1234u);
  // A header claiming 10 GB is refused, whatever the configured limit says.
  Result<uint64_t> huge = ReadSafetensorsHeaderLength(prefix(10'000'000'000), UINT64_MAX);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("exceeds the limit of 100000000"), std::string::npos);
  EXPECT_FALSE(ReadSafetensorsHeaderLength(prefix(25'000'001)).ok());
  EXPECT_FALSE(ReadSafetensorsHeaderLength("short").ok());
}

TEST(SafetensorsHeader, DataRegionMustFitTheFile) {
  const std::string json = R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  EXPECT_TRUE(ParseSafetensorsHeader(json, 8 + json.size() + 16).ok());
  EXPECT_FALSE(ParseSafetensorsHeader(json, 8 + json.size() + 15).ok());
}

TEST(SafetensorsHeader, AcceptsAFilePrefixOrRawJson) {
  const std::string json = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})";
  std::string file(8, '\0');
  file[0] = static_cast<char>(json.size());
  file += json + "\x01\x02";
  EXPECT_TRUE(ParseSafetensorsHeaderOrFilePrefix(file).ok());
  EXPECT_TRUE(ParseSafetensorsHeaderOrFilePrefix(json).ok());
  EXPECT_FALSE(ParseSafetensorsHeaderOrFilePrefix(file.substr(0, 20)).ok());
}

}  // namespace
}  // namespace hubwatch
