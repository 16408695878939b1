#include "tracker/chat_template/tokenizer_config.h"

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace hubwatch::chat_template {
namespace {

using Json = nlohmann::ordered_json;

TEST(TokenizerConfig, ReadsTemplateAndSpecialTokensInBothForms) {
  const Json config = Json::parse(R"({
    "bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": false},
    "eos_token": "</s>",
    "unk_token": null,
    "additional_special_tokens": ["<tool>", {"content": "<think>"}],
    "chat_template": "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}"
  })");
  Result<TemplateRevision> revision = TemplateFromTokenizerConfig(config);
  ASSERT_TRUE(revision.ok()) << revision.error().message;
  EXPECT_EQ(revision->source, "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}");
  ASSERT_EQ(revision->special_tokens.size(), 3u);  // unk_token null is left out
  EXPECT_EQ(revision->special_tokens[0].first, "bos_token");
  EXPECT_EQ(revision->special_tokens[0].second.str(), "<s>");
  EXPECT_EQ(revision->special_tokens[1].second.str(), "</s>");
  EXPECT_EQ(revision->special_tokens[2].first, "additional_special_tokens");
  ASSERT_EQ(revision->special_tokens[2].second.array().size(), 2u);
  EXPECT_EQ(revision->special_tokens[2].second.array()[1].str(), "<think>");
}

TEST(TokenizerConfig, PicksTheDefaultOfNamedTemplates) {
  const Json config = Json::parse(R"({"chat_template": [
    {"name": "tool_use", "template": "tools"},
    {"name": "default", "template": "plain"}]})");
  Result<TemplateRevision> revision = TemplateFromTokenizerConfig(config);
  ASSERT_TRUE(revision.ok());
  EXPECT_EQ(revision->source, "plain");
}

TEST(TokenizerConfig, ReportsMissingOrMalformedTemplates) {
  Result<TemplateRevision> missing =
      TemplateFromTokenizerConfig(Json::parse(R"({"eos_token": "</s>"})"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kUnsupported);
  EXPECT_FALSE(TemplateFromTokenizerConfig(Json::parse(R"({"chat_template": 3})")).ok());
  EXPECT_FALSE(
      TemplateFromTokenizerConfig(Json::parse(R"({"chat_template": [{"name": "x"}]})")).ok());
  EXPECT_FALSE(TemplateFromTokenizerConfig(Json::parse("[]")).ok());
}

}  // namespace
}  // namespace hubwatch::chat_template
