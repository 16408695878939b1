#include "tracker/derivatives/facets.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/derivatives/upstream_files.h"

namespace hubwatch::derivatives {
namespace {

using testing::Llama3Fixed;
using testing::Llama3Upload;

TEST(Facets, TopLevelKeysOfEachFileAreFacetsAndCosmeticKeysAreNot) {
  FacetSet facets = FacetsOfFiles(Llama3Upload());
  EXPECT_TRUE(facets.errors.empty());
  EXPECT_EQ(facets.files.size(), 5u);
  EXPECT_NE(facets.Value("config.json#eos_token_id"), nullptr);
  EXPECT_NE(facets.Value("generation_config.json#eos_token_id"), nullptr);
  EXPECT_NE(facets.Value("tokenizer_config.json#eos_token"), nullptr);
  EXPECT_NE(facets.Value("tokenizer.json#added_tokens"), nullptr);
  EXPECT_NE(facets.Value("chat_template"), nullptr);
  EXPECT_EQ(facets.Value("tokenizer_config.json#chat_template"), nullptr);
  EXPECT_EQ(facets.Value("config.json#transformers_version"), nullptr);
  EXPECT_EQ(facets.Cover("config.json#transformers_version"), Coverage::kAbsent);
  EXPECT_EQ(facets.Cover("chat_template.jinja#x"), Coverage::kNotShipped);
}

TEST(Facets, TheFixChangesExactlyTheEosFacets) {
  FacetSet before = FacetsOfFiles(Llama3Upload());
  FacetSet after = FacetsOfFiles(Llama3Fixed());
  std::vector<std::string> differing;
  for (const auto& [facet, value] : after.values) {
    const std::string* old = before.Value(facet);
    if (old == nullptr || *old != value) differing.push_back(facet);
  }
  EXPECT_EQ(differing, (std::vector<std::string>{"config.json#eos_token_id",
                                                 "generation_config.json#eos_token_id",
                                                 "tokenizer_config.json#eos_token"}));
}

TEST(Facets, ASpecialTokenObjectIsItsContentAndWhitespaceIsNotContent) {
  FacetSet a = FacetsOfFiles({{"tokenizer_config.json", R"({"eos_token": "<|eot_id|>"})"}});
  FacetSet b =
      FacetsOfFiles({{"tokenizer_config.json",
                      "{\n  \"eos_token\": {\"content\": \"<|eot_id|>\", \"lstrip\": false},\n"
                      "  \"transformers_version\": \"4.40.0\"\n}"}});
  ASSERT_NE(a.Value("tokenizer_config.json#eos_token"), nullptr);
  ASSERT_NE(b.Value("tokenizer_config.json#eos_token"), nullptr);
  EXPECT_EQ(*a.Value("tokenizer_config.json#eos_token"),
            *b.Value("tokenizer_config.json#eos_token"));
}

TEST(Facets, TemplatesFromAListFromTheJinjaFileAndFromAGgufAgree) {
  const std::string text = "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}";
  FacetSet listed = FacetsOfFiles(
      {{"tokenizer_config.json", nlohmann::json({{"chat_template",
                                                  {{{"name", "default"}, {"template", text}},
                                                   {{"name", "tool_use"}, {"template", "tools"}}}}})
                                     .dump()}});
  FacetSet jinja = FacetsOfFiles({{"chat_template.jinja", text}});
  GgufMetadata metadata;
  metadata.chat_template = text;
  metadata.named_chat_templates["tool_use"] = "tools";
  FacetSet gguf = FacetsOfGguf(metadata);
  ASSERT_NE(listed.Value("chat_template"), nullptr);
  EXPECT_EQ(*listed.Value("chat_template"), *jinja.Value("chat_template"));
  EXPECT_EQ(*listed.Value("chat_template"), *gguf.Value("chat_template"));
  EXPECT_EQ(*listed.Value("chat_template:tool_use"), *gguf.Value("chat_template:tool_use"));
}

TEST(Facets, AGgufSpeaksForTokenIdsAndStringsAndNothingElse) {
  GgufMetadata metadata;
  metadata.special_token_ids = {{"bos", 128000}, {"eos", 128001}};
  metadata.special_token_text = {{"bos", "<|begin_of_text|>"}, {"eos", "<|end_of_text|>"}};
  metadata.add_bos_token = true;
  FacetSet gguf = FacetsOfGguf(metadata);
  FacetSet upstream = FacetsOfFiles(Llama3Upload());
  for (const char* facet : {"config.json#eos_token_id", "config.json#bos_token_id",
                            "tokenizer_config.json#eos_token", "tokenizer_config.json#bos_token"}) {
    ASSERT_NE(gguf.Value(facet), nullptr) << facet;
    EXPECT_EQ(*gguf.Value(facet), *upstream.Value(facet)) << facet;
  }
  EXPECT_EQ(gguf.Cover("generation_config.json#eos_token_id"), Coverage::kNotShipped);
  EXPECT_EQ(gguf.Cover("tokenizer_config.json#add_eos_token"), Coverage::kNotShipped);
  EXPECT_EQ(gguf.Cover("chat_template"), Coverage::kNotShipped);
}

TEST(Facets, ABrokenFileIsShippedWithNoKeysAndSaysWhy) {
  FacetSet facets = FacetsOfFiles({{"config.json", "{\"eos_token_id\": 1"},
                                   {"generation_config.json", "[1]"},
                                   {"tokenizer.json", std::string(200, '[')}});
  EXPECT_EQ(facets.errors.at("config.json"), "not valid JSON");
  EXPECT_EQ(facets.errors.at("generation_config.json"), "not a JSON object");
  EXPECT_NE(facets.errors.at("tokenizer.json").find("nested deeper"), std::string::npos);
  EXPECT_EQ(facets.Cover("config.json#eos_token_id"), Coverage::kAbsent);
}

TEST(Facets, RoundTripThroughJson) {
  FacetSet facets = FacetsOfFiles(Llama3Upload());
  facets.errors["x.json"] = "why";
  Result<FacetSet> back = FacetsFromJson(FacetsToJson(facets));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->values, facets.values);
  EXPECT_EQ(back->files, facets.files);
  EXPECT_EQ(back->errors, facets.errors);
  EXPECT_FALSE(FacetsFromJson("{\"values\": 3}").ok());
  EXPECT_FALSE(FacetsFromJson("nope").ok());
}

}  // namespace
}  // namespace hubwatch::derivatives
