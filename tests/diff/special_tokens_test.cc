// Effective special tokens, and the Llama-3 EOS incident as the effective change it was.

#include "tracker/diff/special_tokens.h"

#include <gtest/gtest.h>

#include "tests/estimator/test_util.h"

namespace hubwatch::diff {
namespace {

using nlohmann::json;
using testing::ReadFixture;

const std::string kLlama3Config = ReadFixture("models/meta-llama__Meta-Llama-3-8B.config.json");
const std::string kTokenizerBefore =
    ReadFixture("diff/tokenizer/llama3-base.before.tokenizer.json");
const std::string kTokenizerAfter = ReadFixture("diff/tokenizer/llama3-base.after.tokenizer.json");

std::string Edit(const std::string& text, const std::function<void(json&)>& edit) {
  json doc = json::parse(text);
  edit(doc);
  return doc.dump(2);
}

json TokenizerConfig(const std::string& eos) {
  return {{"added_tokens_decoder",
           {{"128000", {{"content", "<|begin_of_text|>"}, {"special", true}}},
            {"128001", {{"content", "<|end_of_text|>"}, {"special", true}}},
            {"128009", {{"content", "<|eot_id|>"}, {"special", true}}}}},
          {"bos_token", "<|begin_of_text|>"},
          {"eos_token", eos},
          {"clean_up_tokenization_spaces", true},
          {"model_max_length", 1000000000},
          {"tokenizer_class", "PreTrainedTokenizerFast"}};
}

// Meta-Llama-3-8B-Instruct as first published (April 2024).
SpecialTokenFiles Llama3Instruct() {
  return {.config = kLlama3Config,
          .generation_config = R"({"bos_token_id": 128000, "eos_token_id": 128001,
                                   "transformers_version": "4.40.0.dev0"})",
          .tokenizer_config = TokenizerConfig("<|end_of_text|>").dump(2),
          .special_tokens_map = R"({"bos_token": {"content": "<|begin_of_text|>", "lstrip": false},
                                    "eos_token": {"content": "<|end_of_text|>", "lstrip": false}})",
          .tokenizer_json = kTokenizerBefore};
}

// After the fixes: generation_config stops on both, the tokenizer's EOS is <|eot_id|>.
SpecialTokenFiles Llama3InstructFixed() {
  SpecialTokenFiles files = Llama3Instruct();
  files.config = Edit(kLlama3Config, [](json& c) { c["eos_token_id"] = 128009; });
  files.generation_config = R"({"bos_token_id": 128000, "eos_token_id": [128001, 128009],
                                "transformers_version": "4.40.0.dev0"})";
  files.tokenizer_config = TokenizerConfig("<|eot_id|>").dump(2);
  files.special_tokens_map = R"({"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})";
  return files;
}

TEST(SpecialTokens, ResolvesLlama3) {
  const EffectiveSpecialTokens tokens = ResolveSpecialTokens(Llama3Instruct());
  EXPECT_EQ(tokens.eos.ids, std::vector<int64_t>{128001});
  EXPECT_EQ(tokens.eos.ids_from, "generation_config.json");
  EXPECT_EQ(tokens.eos.content, "<|end_of_text|>");
  EXPECT_EQ(tokens.eos.content_from, "tokenizer_config.json");
  EXPECT_EQ(tokens.eos.content_id, 128001);
  EXPECT_EQ(tokens.eos.added, false);
  EXPECT_EQ(tokens.bos.ids, std::vector<int64_t>{128000});
  EXPECT_EQ(tokens.bos.content_id, 128000);
  EXPECT_EQ(tokens.bos.added, false);  // the ByteLevel post_processor adds nothing (F2)
  EXPECT_EQ(tokens.bos.added_from, "tokenizer.json post_processor");
  EXPECT_TRUE(tokens.pad.ids.empty());
  EXPECT_FALSE(tokens.pad.content.has_value());
  EXPECT_TRUE(tokens.unreadable.empty());
}

// F1, all files at once: exactly one effective change, for EOS.
TEST(SpecialTokens, Llama3EosIncidentIsOneEffectiveChange) {
  const std::vector<Change> changes = DiffSpecialTokens(Llama3Instruct(), Llama3InstructFixed());
  ASSERT_EQ(changes.size(), 1u);
  const Change& change = changes[0];
  EXPECT_EQ(change.kind, ChangeKind::kSpecialTokens);
  EXPECT_EQ(change.impact, Impact::kBehavioral);
  EXPECT_EQ(change.path, "");
  EXPECT_EQ(change.summary,
            "effective EOS: ids 128001 -> [128001, 128009] (generation_config.json); token "
            "\"<|end_of_text|>\" (128001) -> \"<|eot_id|>\" (128009)");
  EXPECT_EQ(change.details["token"], "eos");
  EXPECT_EQ(change.details["changed"], json({"ids", "content"}));
  EXPECT_EQ(change.details["before"]["ids"], json({128001}));
  EXPECT_EQ(change.details["after"]["ids"], json({128001, 128009}));
  EXPECT_EQ(change.details["after"]["content_id"], 128009);
  EXPECT_FALSE(change.details.contains("warnings"));
}

// F1 commit by commit: config.json's eos_token_id alone changes nothing effective, because
// generation_config.json wins; the tokenizer_config commit alone leaves the tokenizer's EOS
// outside the stop ids, which the change warns about.
TEST(SpecialTokens, Llama3CommitByCommit) {
  SpecialTokenFiles config_only = Llama3Instruct();
  config_only.config = Llama3InstructFixed().config;
  EXPECT_TRUE(DiffSpecialTokens(Llama3Instruct(), config_only).empty());

  SpecialTokenFiles tokenizer_only = Llama3Instruct();
  tokenizer_only.tokenizer_config = Llama3InstructFixed().tokenizer_config;
  std::vector<Change> changes = DiffSpecialTokens(Llama3Instruct(), tokenizer_only);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].summary,
            "effective EOS: token \"<|end_of_text|>\" (128001) -> \"<|eot_id|>\" (128009)");
  EXPECT_EQ(changes[0].details["warnings"][0],
            "the tokenizer's EOS 128009 is not among the generation stop ids");

  SpecialTokenFiles generation_fixed = tokenizer_only;
  generation_fixed.generation_config = Llama3InstructFixed().generation_config;
  changes = DiffSpecialTokens(tokenizer_only, generation_fixed);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].summary,
            "effective EOS: ids 128001 -> [128001, 128009] (generation_config.json)");
}

// F2: the base model's post-processor now adds <|begin_of_text|>.
TEST(SpecialTokens, Llama3BaseBosNowAdded) {
  SpecialTokenFiles before = Llama3Instruct();
  SpecialTokenFiles after = before;
  after.tokenizer_json = kTokenizerAfter;
  const std::vector<Change> changes = DiffSpecialTokens(before, after);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].summary, "effective BOS: now added automatically");
  EXPECT_EQ(changes[0].details["after"]["added_from"], "tokenizer.json post_processor");
}

TEST(SpecialTokens, IdsFallBackThroughTheFiles) {
  SpecialTokenFiles files;
  files.config = R"({"text_config": {"eos_token_id": 1}})";
  EXPECT_EQ(ResolveSpecialTokens(files).eos.ids_from, "config.json text_config");
  files.config = R"({"eos_token_id": 2, "text_config": {"eos_token_id": 1}})";
  EXPECT_EQ(ResolveSpecialTokens(files).eos.ids, std::vector<int64_t>{2});
  files.generation_config = R"({"eos_token_id": null})";  // null: not set
  EXPECT_EQ(ResolveSpecialTokens(files).eos.ids_from, "config.json");
  files.generation_config = R"({"eos_token_id": [3, 4]})";
  EXPECT_EQ(ResolveSpecialTokens(files).eos.ids, (std::vector<int64_t>{3, 4}));
}

TEST(SpecialTokens, ContentPrecedenceLegacyAndCurrent) {
  SpecialTokenFiles files;
  files.tokenizer_config = R"({"eos_token": "</s>"})";
  files.special_tokens_map = R"({"eos_token": {"content": "<|im_end|>"}})";
  // Legacy (no added_tokens_decoder): special_tokens_map.json wins.
  EXPECT_EQ(ResolveSpecialTokens(files).eos.content, "<|im_end|>");
  EXPECT_EQ(ResolveSpecialTokens(files).eos.content_from, "special_tokens_map.json");
  // Current files: tokenizer_config.json decides, and its added_tokens_decoder gives the id.
  files.tokenizer_config =
      R"({"eos_token": "</s>", "added_tokens_decoder": {"2": {"content": "</s>"}}})";
  const EffectiveToken eos = ResolveSpecialTokens(files).eos;
  EXPECT_EQ(eos.content, "</s>");
  EXPECT_EQ(eos.content_id, 2);
  // An explicit null is "no token".
  files.tokenizer_config = R"({"pad_token": null, "added_tokens_decoder": {}})";
  EXPECT_EQ(ResolveSpecialTokens(files).pad.content_from, "tokenizer_config.json");
  EXPECT_FALSE(ResolveSpecialTokens(files).pad.content.has_value());
}

TEST(SpecialTokens, ContentIdFromTheVocabulary) {
  SpecialTokenFiles files;
  files.tokenizer_config = R"({"eos_token": "the"})";
  files.tokenizer_json = kTokenizerBefore;
  EXPECT_EQ(ResolveSpecialTokens(files).eos.content_id, 16);
}

TEST(SpecialTokens, LlamaAndGemmaClassesAddBosFromTheirFlag) {
  SpecialTokenFiles files;
  files.tokenizer_config = R"({"tokenizer_class": "GemmaTokenizer", "bos_token": "<bos>"})";
  files.tokenizer_json = kTokenizerBefore;  // its post_processor would say "not added"
  EXPECT_EQ(ResolveSpecialTokens(files).bos.added, true);  // the class default
  SpecialTokenFiles off = files;
  off.tokenizer_config =
      R"({"tokenizer_class": "GemmaTokenizer", "bos_token": "<bos>", "add_bos_token": false})";
  const std::vector<Change> changes = DiffSpecialTokens(files, off);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].summary, "effective BOS: no longer added automatically");
  // Without tokenizer.json the flag alone says.
  SpecialTokenFiles slow;
  slow.tokenizer_config = R"({"add_eos_token": true, "eos_token": "</s>"})";
  EXPECT_EQ(ResolveSpecialTokens(slow).eos.added, true);
  EXPECT_FALSE(ResolveSpecialTokens(SpecialTokenFiles{}).eos.added.has_value());
}

TEST(SpecialTokens, UnreadableInputsClaimNothing) {
  SpecialTokenFiles broken = Llama3InstructFixed();
  broken.generation_config = "{";
  EXPECT_EQ(ResolveSpecialTokens(broken).unreadable,
            std::vector<std::string>{"generation_config.json"});
  EXPECT_TRUE(DiffSpecialTokens(Llama3Instruct(), broken).empty());
  broken = Llama3InstructFixed();
  broken.tokenizer_json = "{\"model\": 1}";
  EXPECT_EQ(ResolveSpecialTokens(broken).unreadable, std::vector<std::string>{"tokenizer.json"});
  EXPECT_TRUE(DiffSpecialTokens(broken, Llama3Instruct()).empty());
}

TEST(SpecialTokens, NothingChangedNothingReported) {
  EXPECT_TRUE(DiffSpecialTokens(Llama3Instruct(), Llama3Instruct()).empty());
  EXPECT_TRUE(DiffSpecialTokens({}, {}).empty());
  // The same values from another file are the same effective value.
  SpecialTokenFiles moved = Llama3Instruct();
  moved.generation_config = R"({"bos_token_id": 128000, "transformers_version": "4.40.0.dev0"})";
  EXPECT_TRUE(DiffSpecialTokens(Llama3Instruct(), moved).empty());  // config.json says 128001 too
}

}  // namespace
}  // namespace hubwatch::diff
