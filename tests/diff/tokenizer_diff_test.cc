// The tokenizer engine: tokenizer.json by section, on the shapes of the real incidents.

#include "tracker/diff/tokenizer_diff.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/diff/synthetic_tokenizer.h"
#include "tests/estimator/test_util.h"

namespace hubwatch::diff {
namespace {

using nlohmann::json;
using testing::ReadFixture;

const std::string kBefore = ReadFixture("diff/tokenizer/llama3-base.before.tokenizer.json");
const std::string kAfter = ReadFixture("diff/tokenizer/llama3-base.after.tokenizer.json");

std::string Edit(const std::string& text, const std::function<void(json&)>& edit) {
  json doc = json::parse(text);
  edit(doc);
  return doc.dump(2);
}

Change OnlyChange(const std::vector<Change>& changes) {
  EXPECT_EQ(changes.size(), 1u);
  return changes.empty() ? Change{} : changes[0];
}

// F2: Meta-Llama-3-8B "Update post-processor to add bos (#41)", with "ignore_merges" added.
TEST(TokenizerJsonDiff, Llama3BasePostProcessorAddsBos) {
  const Change change = OnlyChange(DiffTokenizerJson(kBefore, kAfter));
  EXPECT_EQ(change.kind, ChangeKind::kTokenizer);
  EXPECT_EQ(change.path, "tokenizer.json");
  EXPECT_EQ(change.impact, Impact::kBehavioral);
  EXPECT_EQ(change.summary,
            "post_processor ByteLevel -> Sequence[ByteLevel, TemplateProcessing(<|begin_of_text|> "
            "$A)]; model.ignore_merges added: true");
  const json& sections = change.details["sections"];
  ASSERT_TRUE(sections.contains("post_processor"));
  EXPECT_EQ(sections["post_processor"]["after"]["processors"][1]["type"], "TemplateProcessing");
  EXPECT_EQ(sections["post_processor"]["impact"], "behavioral");
  ASSERT_TRUE(sections.contains("model"));
  EXPECT_FALSE(sections.contains("vocab"));  // byte-identical
  EXPECT_FALSE(sections.contains("merges"));
  EXPECT_EQ(change.details["status"], "modified");
}

TEST(TokenizerJsonDiff, ReformattingIsNoChange) {
  const std::string compact = json::parse(kBefore).dump();
  ASSERT_NE(compact, kBefore);
  EXPECT_TRUE(DiffTokenizerJson(kBefore, compact).empty());
  EXPECT_TRUE(DiffTokenizerJson(kBefore, kBefore).empty());
  // The same token written with an escape.
  std::string escaped = kBefore;
  const size_t at = escaped.find("\"\xc4\xa0the\"");
  ASSERT_NE(at, std::string::npos);
  escaped.replace(at, 7, "\"\\u0120the\"");
  EXPECT_TRUE(DiffTokenizerJson(kBefore, escaped).empty());
}

TEST(TokenizerJsonDiff, VocabAddedRemovedRenumbered) {
  const std::string added = Edit(kBefore, [](json& t) {
    t["model"]["vocab"]["Ġand"] = 22;
    t["model"]["vocab"]["Ġof"] = 23;
  });
  Change change = OnlyChange(DiffTokenizerJson(kBefore, added));
  EXPECT_EQ(change.impact, Impact::kBehavioral);
  EXPECT_EQ(change.summary, "vocab 22 -> 24 tokens: +2 (\"Ġand\" 22)");
  json vocab = change.details["sections"]["vocab"];
  EXPECT_EQ(vocab["added"], 2);
  EXPECT_EQ(vocab["examples"]["added"][1], json({{"token", "Ġof"}, {"id", 23}}));

  const std::string moved = Edit(kBefore, [](json& t) {
    t["model"]["vocab"].erase("!");
    t["model"]["vocab"]["the"] = 0;  // was 16
  });
  change = OnlyChange(DiffTokenizerJson(kBefore, moved));
  EXPECT_EQ(change.impact, Impact::kBreaking);
  EXPECT_EQ(change.summary, "vocab 22 -> 21 tokens: -1 (\"!\" 0), 1 renumbered (\"the\" 16 -> 0)");
  vocab = change.details["sections"]["vocab"];
  EXPECT_EQ(vocab["removed"], 1);
  EXPECT_EQ(vocab["renumbered"], 1);
  EXPECT_EQ(vocab["examples"]["renumbered"][0],
            json({{"token", "the"}, {"old_id", 16}, {"new_id", 0}}));
  EXPECT_EQ(vocab["impact"], "breaking");
}

TEST(TokenizerJsonDiff, MergesFormatAloneIsCosmetic) {
  const std::string pairs = Edit(kBefore, [](json& t) {
    json list = json::array();
    for (const json& merge : t["model"]["merges"]) {
      const std::string text = merge;
      list.push_back({text.substr(0, text.find(' ')), text.substr(text.find(' ') + 1)});
    }
    t["model"]["merges"] = list;
  });
  const Change change = OnlyChange(DiffTokenizerJson(kBefore, pairs));
  EXPECT_EQ(change.impact, Impact::kCosmetic);
  EXPECT_EQ(change.summary, "merges format strings -> pairs (same merges)");
}

TEST(TokenizerJsonDiff, MergesAddedRemovedReranked) {
  const std::string edited = Edit(kBefore, [](json& t) {
    json& merges = t["model"]["merges"];
    merges.erase(merges.begin() + 7);  // "i n"
    std::swap(merges[0], merges[1]);   // "Ġ t" now before "Ġ Ġ"
    merges.push_back("a nd");
  });
  const Change change = OnlyChange(DiffTokenizerJson(kBefore, edited));
  EXPECT_EQ(change.impact, Impact::kBehavioral);
  EXPECT_EQ(change.summary, "merges +1 (\"a nd\"), -1 (\"i n\"), 2 re-ranked");
  const json& merges = change.details["sections"]["merges"];
  EXPECT_EQ(merges["count_before"], 11);
  EXPECT_EQ(merges["count_after"], 11);
  EXPECT_EQ(merges["examples"]["removed"][0], json({{"merge", {"i", "n"}}, {"rank", 7}}));
}

TEST(TokenizerJsonDiff, AddedTokensContentAndFlags) {
  const std::string edited = Edit(kBefore, [](json& t) {
    for (json& token : t["added_tokens"]) {
      if (token["id"] == 128002) token["content"] = "<|start_header_id|>";
      if (token["id"] == 128009) token["special"] = false;
    }
    t["added_tokens"].push_back({{"id", 128256}, {"content", "<|tool|>"}, {"special", true}});
  });
  const Change change = OnlyChange(DiffTokenizerJson(kBefore, edited));
  EXPECT_EQ(change.impact, Impact::kBreaking);  // id 128002 now means something else
  EXPECT_EQ(change.summary,
            "added_tokens +1 (\"<|tool|>\" 128256), 1 content changed (128002 "
            "\"<|reserved_special_token_0|>\" -> \"<|start_header_id|>\"), 1 flags changed "
            "(\"<|eot_id|>\" special true -> false)");
  const json& added = change.details["sections"]["added_tokens"];
  EXPECT_EQ(added["flags_changed"][0]["fields"]["special"], json({true, false}));
  EXPECT_EQ(added["count_after"], 5);
}

TEST(TokenizerJsonDiff, AddedTokenRenumbered) {
  const std::string edited = Edit(kBefore, [](json& t) { t["added_tokens"][3]["id"] = 128010; });
  const Change change = OnlyChange(DiffTokenizerJson(kBefore, edited));
  EXPECT_EQ(change.impact, Impact::kBreaking);
  EXPECT_EQ(change.summary, "added_tokens 1 renumbered (\"<|eot_id|>\" 128009 -> 128010)");
}

// F4: Mistral-7B-Instruct-v0.3's normalizer (Prepend "▁" + Replace " " -> "▁") removed.
TEST(TokenizerJsonDiff, MistralNormalizerRemoved) {
  const std::string with_normalizer = Edit(kBefore, [](json& t) {
    t["normalizer"] = json::parse(R"({"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "▁"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]})");
  });
  const std::string without = Edit(with_normalizer, [](json& t) { t["normalizer"] = nullptr; });
  const Change change = OnlyChange(DiffTokenizerJson(with_normalizer, without));
  EXPECT_EQ(change.summary, "normalizer Sequence[Prepend, Replace] -> none");
  EXPECT_EQ(change.impact, Impact::kBehavioral);
  EXPECT_TRUE(change.details["sections"]["normalizer"]["after"].is_null());
}

TEST(TokenizerJsonDiff, SameComponentTypesNameTheField) {
  const std::string edited =
      Edit(kBefore, [](json& t) { t["decoder"]["add_prefix_space"] = false; });
  EXPECT_EQ(OnlyChange(DiffTokenizerJson(kBefore, edited)).summary,
            "decoder.add_prefix_space true -> false");
}

TEST(TokenizerJsonDiff, VersionIsCosmeticModelTypeIsBreaking) {
  const std::string version = Edit(kBefore, [](json& t) { t["version"] = "1.1"; });
  EXPECT_EQ(OnlyChange(DiffTokenizerJson(kBefore, version)).impact, Impact::kCosmetic);
  const std::string type = Edit(kBefore, [](json& t) { t["model"]["type"] = "WordPiece"; });
  const Change change = OnlyChange(DiffTokenizerJson(kBefore, type));
  EXPECT_EQ(change.impact, Impact::kBreaking);
  EXPECT_EQ(change.summary, "model BPE -> WordPiece");
}

TEST(TokenizerJsonDiff, UnigramScores) {
  const std::string before = R"({"model": {"type": "Unigram", "unk_id": 0,
      "vocab": [["<unk>", 0.0], ["▁the", -3.5], ["s", -4.25]]}})";
  const std::string after = R"({"model": {"type": "Unigram", "unk_id": 0,
      "vocab": [["<unk>", 0.0], ["▁the", -3.0], ["s", -4.25], ["▁a", -5.0]]}})";
  const Change change = OnlyChange(DiffTokenizerJson(before, after));
  EXPECT_EQ(change.summary, "vocab 3 -> 4 tokens: +1 (\"▁a\" 3), 1 scores changed");
  EXPECT_EQ(change.details["sections"]["vocab"]["scores_changed"], 1);
}

TEST(TokenizerJsonDiff, FileAddedOrRemoved) {
  Change change = OnlyChange(DiffTokenizerJson(std::nullopt, kBefore));
  EXPECT_EQ(change.summary, "file added: BPE, 22 tokens, 11 merges, 4 added tokens");
  EXPECT_EQ(change.details["status"], "added");
  change = OnlyChange(DiffTokenizerJson(kBefore, std::nullopt));
  EXPECT_EQ(change.summary, "file removed (was BPE, 22 tokens, 11 merges, 4 added tokens)");
}

TEST(TokenizerJsonDiff, MalformedFilesAreErrorChanges) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {kBefore.substr(0, kBefore.size() / 2), "invalid JSON: byte"},
      {"<html>rate limited</html>", "not a tokenizer.json: not a JSON object"},
      {R"({"version": "1.0", "added_tokens": []})", "not a tokenizer.json: no \"model\" object"},
      {R"({"model": {"type": "BPE"}})", "not a tokenizer.json: \"model\" has no \"vocab\""},
      {Edit(kBefore, [](json& t) { t["model"]["vocab"]["a"] = "3"; }), "model.vocab: byte"},
      {Edit(kBefore, [](json& t) { t["model"]["merges"].push_back("nospace"); }),
       "model.merges: byte"},
      {Edit(kBefore,
            [](json& t) {
              t["added_tokens"] = {{"content", "x"}};
            }),
       "added_tokens:"},
      {Edit(kBefore, [](json& t) { t["added_tokens"] = "x"; }), "added_tokens: not an array"},
  };
  for (const auto& [text, message] : cases) {
    const Change change = OnlyChange(DiffTokenizerJson(kBefore, text));
    EXPECT_EQ(change.kind, ChangeKind::kError);
    EXPECT_EQ(change.impact, Impact::kBehavioral);
    EXPECT_TRUE(change.summary.starts_with("tokenizer.json: " + message)) << change.summary;
    // The next revision fixes it.
    const Change fixed = OnlyChange(DiffTokenizerJson(text, kBefore));
    EXPECT_EQ(fixed.kind, ChangeKind::kTokenizer);
    EXPECT_EQ(fixed.details["status"], "fixed") << fixed.summary;
  }
}

// Random damage to a real file: never a crash, always an error change or a tokenizer change.
TEST(TokenizerJsonDiff, DamagedInputNeverCrashes) {
  std::mt19937 rng(7);
  const std::string alphabet = "{}[]\",:\\ 0a-\xc4\xa0";
  for (int i = 0; i < 3000; ++i) {
    std::string damaged = i % 2 == 0 ? kBefore : kAfter;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % damaged.size();
      switch (rng() % 3) {
        case 0:
          damaged[at] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          damaged.erase(at, 1 + rng() % 8);
          break;
        default:
          damaged.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
    }
    for (const Change& change : DiffTokenizerJson(kBefore, damaged)) {
      EXPECT_TRUE(change.kind == ChangeKind::kError || change.kind == ChangeKind::kTokenizer);
      EXPECT_FALSE(change.summary.empty());
      EXPECT_NO_THROW(change.details.dump());
    }
    for (const Change& change : DiffTokenizerJson(damaged, kAfter)) {
      EXPECT_FALSE(change.summary.empty());
    }
  }
}

// A generated 20k-token file, the shape of the benchmark's: counts come out exact.
TEST(TokenizerJsonDiff, LargeVocabCounts) {
  using testing::SyntheticTokenizerJson;
  const testing::SyntheticTokenizerSpec base{.vocab_size = 20'000, .merges = 15'000};
  testing::SyntheticTokenizerSpec edited = base;
  edited.tokens_appended = 10;
  edited.tokens_renumbered = 5;
  edited.merges_appended = 7;
  const Change change =
      OnlyChange(DiffTokenizerJson(SyntheticTokenizerJson(base), SyntheticTokenizerJson(edited)));
  const json& sections = change.details["sections"];
  EXPECT_EQ(sections["vocab"]["added"], 10);
  EXPECT_EQ(sections["vocab"]["removed"], 0);
  EXPECT_EQ(sections["vocab"]["renumbered"], 10);  // five swapped pairs
  EXPECT_EQ(sections["vocab"]["examples"]["added"].size(), 5u);
  EXPECT_EQ(sections["vocab"]["examples"]["added"][0]["id"], 20'000);
  EXPECT_EQ(sections["merges"]["added"], 7);
  EXPECT_EQ(sections["merges"]["removed"], 0);
  EXPECT_EQ(sections["merges"]["reranked"], 0);
  EXPECT_EQ(change.impact, Impact::kBreaking);
  edited = base;
  edited.bos_template = true;
  EXPECT_EQ(
      OnlyChange(DiffTokenizerJson(SyntheticTokenizerJson(base), SyntheticTokenizerJson(edited)))
          .summary,
      "post_processor ByteLevel -> TemplateProcessing(<|reserved_0|> $A)");
}

// F1: tokenizer_config.json eos_token "<|end_of_text|>" -> "<|eot_id|>".
TEST(TokenizerConfigDiff, Llama3EosToken) {
  const std::string before = R"({"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>",
      "chat_template": "{{ bos_token }}", "model_max_length": 1000000000000000019884624838656,
      "tokenizer_class": "PreTrainedTokenizerFast"})";
  const std::string after = R"({"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>",
      "chat_template": "{{ bos_token }}", "model_max_length": 1000000000000000019884624838656,
      "tokenizer_class": "PreTrainedTokenizerFast"})";
  const Change change = OnlyChange(DiffTokenizerConfig(before, after));
  EXPECT_EQ(change.kind, ChangeKind::kTokenizer);
  EXPECT_EQ(change.path, "tokenizer_config.json");
  EXPECT_EQ(change.impact, Impact::kBehavioral);
  EXPECT_EQ(change.summary, "eos_token \"<|end_of_text|>\" -> \"<|eot_id|>\"");
}

TEST(TokenizerConfigDiff, ChatTemplateIsNotTheTokenizerEnginesBusiness) {
  EXPECT_TRUE(DiffTokenizerConfig(R"({"eos_token": "</s>", "chat_template": "a"})",
                                  R"({"eos_token": "</s>", "chat_template": "b"})")
                  .empty());
  // F2: "Remove chat template (#32)": the tokenizer part is unchanged.
  EXPECT_TRUE(DiffTokenizerConfig(R"({"eos_token": "</s>", "chat_template": "a"})",
                                  R"({"eos_token": "</s>"})")
                  .empty());
}

TEST(TokenizerConfigDiff, FieldImpacts) {
  Change change =
      OnlyChange(DiffTokenizerConfig(R"({"add_bos_token": true, "name_or_path": "a"})",
                                     R"({"add_bos_token": false, "name_or_path": "b"})"));
  EXPECT_EQ(change.impact, Impact::kBehavioral);
  EXPECT_EQ(change.summary, "add_bos_token true -> false; name_or_path \"a\" -> \"b\"");
  change = OnlyChange(DiffTokenizerConfig(
      R"({"added_tokens_decoder": {"128002": {"content": "<|reserved_special_token_0|>", "special": true}}})",
      R"({"added_tokens_decoder": {"128002": {"content": "<|start_header_id|>", "special": true}}})"));
  EXPECT_EQ(change.impact, Impact::kBreaking);
  EXPECT_EQ(OnlyChange(DiffTokenizerConfig(R"({"name_or_path": "a"})", R"({"name_or_path": "b"})"))
                .impact,
            Impact::kCosmetic);
}

TEST(SpecialTokensMapDiff, EosChange) {
  const Change change = OnlyChange(
      DiffSpecialTokensMap(R"({"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"})",
                           R"({"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})"));
  EXPECT_EQ(change.kind, ChangeKind::kTokenizer);
  EXPECT_EQ(change.path, "special_tokens_map.json");
  EXPECT_EQ(change.impact, Impact::kBehavioral);
  EXPECT_EQ(change.summary, "eos_token \"<|end_of_text|>\" -> \"<|eot_id|>\"");
  EXPECT_EQ(OnlyChange(DiffSpecialTokensMap("{", "{}")).details["status"], "fixed");
}

TEST(AddedTokensJsonDiff, RenumberedIsBreaking) {
  Change change =
      OnlyChange(DiffAddedTokensJson(R"({"<|im_start|>": 151644})", R"({"<|im_start|>": 151645})"));
  EXPECT_EQ(change.impact, Impact::kBreaking);
  EXPECT_EQ(change.summary, "<|im_start|> 151644 -> 151645");
  change = OnlyChange(DiffAddedTokensJson(R"({"<|im_start|>": 151644})",
                                          R"({"<|im_start|>": 151644, "<|im_end|>": 151645})"));
  EXPECT_EQ(change.impact, Impact::kBehavioral);
  EXPECT_EQ(DiffAddedTokensJson("{}", "[]")[0].kind, ChangeKind::kError);
}

}  // namespace
}  // namespace hubwatch::diff
