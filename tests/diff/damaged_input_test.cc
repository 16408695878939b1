// Untrusted input: every engine, fed randomly damaged versions of real-shaped files, returns
// changes (errors among them) and never crashes, throws, or emits details that cannot be dumped.

#include <gtest/gtest.h>

#include <random>

#include "tests/estimator/test_util.h"
#include "tracker/diff/chat_template_diff.h"
#include "tracker/diff/config_diff.h"
#include "tracker/diff/special_tokens.h"
#include "tracker/diff/tokenizer_diff.h"
#include "tracker/diff/weights_diff.h"

namespace hubwatch::diff {
namespace {

std::string Damage(std::string text, std::mt19937& rng) {
  static const std::string kBytes = "{}[]\",:\\ 0-tn\xff\xc3\x80";
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !text.empty(); ++e) {
    const size_t at = rng() % text.size();
    switch (rng() % 4) {
      case 0:
        text[at] = kBytes[rng() % kBytes.size()];
        break;
      case 1:
        text.erase(at, 1 + rng() % 16);
        break;
      case 2:
        text.insert(at, 1, kBytes[rng() % kBytes.size()]);
        break;
      default:
        text.resize(at);  // truncated download
    }
  }
  return text;
}

void ExpectWellFormed(const std::vector<Change>& changes) {
  for (const Change& change : changes) {
    EXPECT_FALSE(change.summary.empty());
    EXPECT_EQ(change.summary.find('\n'), std::string::npos) << change.summary;
    EXPECT_NO_THROW((void)change.details.dump()) << change.summary;
    EXPECT_NO_THROW((void)nlohmann::json(change.summary).dump()) << change.summary;
  }
}

TEST(DamagedInput, NoEngineCrashesOrThrows) {
  const std::string config = testing::ReadFixture("models/meta-llama__Meta-Llama-3-8B.config.json");
  const std::string tokenizer =
      testing::ReadFixture("diff/tokenizer/llama3-base.after.tokenizer.json");
  const std::string tokenizer_config =
      R"({"added_tokens_decoder": {"1": {"content": "<s>", "special": true}}, "bos_token": "<s>",
          "eos_token": {"content": "</s>", "__type": "AddedToken"}, "add_bos_token": true,
          "chat_template": [{"name": "default", "template": "{{ bos_token }}{{ messages }}"}]})";
  const std::string index =
      R"({"metadata": {"total_size": 10}, "weight_map": {"w": "model-00001-of-00001.safetensors"}})";
  const Manifest manifest = {{"model-00001-of-00001.safetensors", "o", 10, "s", 10},
                             {"model.safetensors.index.json", "i", 10, std::nullopt, std::nullopt}};
  std::mt19937 rng(11);
  for (int i = 0; i < 1500; ++i) {
    const std::string bad_config = Damage(config, rng);
    const std::string bad_tokenizer = Damage(tokenizer, rng);
    const std::string bad_tokenizer_config = Damage(tokenizer_config, rng);
    ExpectWellFormed(DiffConfig(config, bad_config));
    ExpectWellFormed(DiffGenerationConfig(bad_config, config));
    ExpectWellFormed(DiffTokenizerConfig(tokenizer_config, bad_tokenizer_config));
    ExpectWellFormed(DiffSpecialTokensMap(bad_tokenizer_config, tokenizer_config));
    ExpectWellFormed(DiffAddedTokensJson("{}", bad_config));
    ExpectWellFormed(
        DiffChatTemplates({.tokenizer_config = tokenizer_config},
                          {.tokenizer_config = bad_tokenizer_config,
                           .chat_template_json = Damage(R"({"chat_template": "x"})", rng)}));
    const SpecialTokenFiles good = {
        .config = config, .tokenizer_config = tokenizer_config, .tokenizer_json = tokenizer};
    ExpectWellFormed(DiffSpecialTokens(good, {.config = bad_config,
                                              .tokenizer_config = bad_tokenizer_config,
                                              .tokenizer_json = bad_tokenizer}));
    ExpectWellFormed(DiffWeights(manifest, manifest, {}, {{"model.safetensors.index.json", index}},
                                 {{"model.safetensors.index.json", Damage(index, rng)}}));
  }
}

}  // namespace
}  // namespace hubwatch::diff
