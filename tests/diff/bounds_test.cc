// Upstream decides how long its lists are. A 1.4M-id eos_token_id (10 MB of config.json),
// 100k added tokens, 200k tensors or 100k files each give changes of bounded size: the first
// items of each list and a count of all, summaries of one short line. Inputs are generated.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tracker/diff/change.h"
#include "tracker/diff/chat_template_diff.h"
#include "tracker/diff/config_diff.h"
#include "tracker/diff/files_diff.h"
#include "tracker/diff/json_diff.h"
#include "tracker/diff/json_text.h"
#include "tracker/diff/special_tokens.h"
#include "tracker/diff/tokenizer_diff.h"
#include "tracker/diff/weights_diff.h"

namespace hubwatch::diff {
namespace {

using nlohmann::json;

// The bound the tests hold each change to: well under kMaxDetailsBytes, which the store
// enforces for any engine.
constexpr size_t kDetailsBound = 96 * 1024;
constexpr size_t kSummaryBound = 300;

size_t Bytes(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace).size();
}

void ExpectBounded(const std::vector<Change>& changes) {
  ASSERT_FALSE(changes.empty());
  for (const Change& c : changes) {
    EXPECT_LE(Bytes(c.details), kDetailsBound) << c.summary;
    EXPECT_LE(c.summary.size(), kSummaryBound) << c.summary;
  }
}

json Ids(size_t n, int64_t from = 0) {
  json ids = json::array();
  for (size_t i = 0; i < n; ++i) ids.push_back(from + static_cast<int64_t>(i));
  return ids;
}

std::string Config(const json& eos) {
  return json{{"model_type", "llama"}, {"vocab_size", 128256}, {"eos_token_id", eos}}.dump();
}

TEST(Bounds, AHugeEosListInConfigJson) {
  const std::string big = Config(Ids(1'400'000));
  ASSERT_GT(big.size(), 10'000'000u);  // the 10 MB of the report
  for (const auto& [before, after] :
       std::vector<std::pair<std::optional<std::string>, std::optional<std::string>>>{
           {Config(128001), big},                // a number becomes the list
           {std::nullopt, big},                  // the file arrives with it
           {big, Config(Ids(1'400'000, 7))}}) {  // one list for another
    const std::vector<Change> changes = DiffConfig(before, after);
    ExpectBounded(changes);
    // One op for the list, not one per element (an added file adds its other two keys too).
    ASSERT_EQ(changes[0].details["op_count"], before ? 1 : 3);
    const json& op = changes[0].details["ops"][0];  // most severe first: eos is behavioral
    EXPECT_EQ(op["path"], "/eos_token_id");
    EXPECT_EQ(op["value_size"], 1'400'000);
    EXPECT_EQ(op["truncated"], true);
    EXPECT_EQ(op["value"][0], before && before->size() > 1000 ? 7 : 0);
  }
}

TEST(Bounds, ManyOpsAreListedWithinTheByteBudget) {
  json before = json::object(), after = json::object();
  for (int i = 0; i < 100'000; ++i) after["key_" + std::to_string(i)] = std::string(200, 'x');
  const std::vector<Change> changes = DiffConfig(before.dump(), after.dump());
  ExpectBounded(changes);
  EXPECT_EQ(changes[0].details["op_count"], 100'000);
  EXPECT_LT(changes[0].details["ops"].size(), kMaxListedOps);  // the bytes ran out first
  EXPECT_GT(changes[0].details["ops"].size(), 100u);
}

TEST(Bounds, AHugeEosListInTheEffectiveSpecialTokens) {
  const std::vector<Change> changes =
      DiffSpecialTokens({.config = Config(128001)}, {.config = Config(Ids(1'400'000))});
  ExpectBounded(changes);
  const json& after = changes[0].details["after"];
  EXPECT_EQ(after["ids"].size(), kMaxListedIds);
  EXPECT_EQ(after["ids_count"], 1'400'000);
  EXPECT_EQ(after["ids"][1], 1);
  EXPECT_NE(changes[0].summary.find("(1400000 ids)"), std::string::npos) << changes[0].summary;
  EXPECT_FALSE(changes[0].details["before"].contains("ids_count"));  // one id: listed whole
}

std::string Tokenizer(size_t added_tokens, const std::string& prefix) {
  json added = json::array();
  for (size_t i = 0; i < added_tokens; ++i) {
    added.push_back({{"id", 1000 + i},
                     {"content", prefix + std::to_string(i) + std::string(100, 't')},
                     {"special", true}});
  }
  return json{{"version", "1.0"},
              {"added_tokens", added},
              {"model", {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}}}, {"merges", {"a b"}}}}}
      .dump();
}

TEST(Bounds, HundredThousandAddedTokens) {
  const std::vector<Change> changes =
      DiffTokenizerJson(Tokenizer(10, "<old_"), Tokenizer(100'000, "<new_"));
  ExpectBounded(changes);
  const json& section = changes[0].details["sections"]["added_tokens"];
  EXPECT_EQ(section["added_count"], 99'990);  // 10 ids kept their place with a new content
  EXPECT_EQ(section["content_changed_count"], 10);
  EXPECT_LE(section["added"].size(), 50u);

  json decoder_before = json::object(), decoder_after = json::object();
  for (int i = 0; i < 100'000; ++i) {
    decoder_after[std::to_string(i)] = {{"content", "<t" + std::to_string(i) + ">"}};
  }
  ExpectBounded(DiffTokenizerConfig(json{{"added_tokens_decoder", decoder_before}}.dump(),
                                    json{{"added_tokens_decoder", decoder_after}}.dump()));
}

TEST(Bounds, ManyTopLevelTokenizerSections) {
  json before = json::parse(Tokenizer(1, "<t"));
  json after = before;
  for (int i = 0; i < 20'000; ++i) after["extra_" + std::to_string(i)] = {{"type", "X"}};
  const std::vector<Change> changes = DiffTokenizerJson(before.dump(), after.dump());
  ExpectBounded(changes);
  EXPECT_EQ(changes[0].details["section_count"], 20'000);
  EXPECT_LE(changes[0].details["sections"].size(), 16u);
}

TEST(Bounds, TwoHundredThousandTensors) {
  auto header = [](const std::string& prefix) {
    SafetensorsHeader h;
    for (int i = 0; i < 200'000; ++i) {
      h.tensors[prefix + std::to_string(i) + std::string(300, 'n')] = {"BF16", {4}, 0, 8, 4};
    }
    return h;
  };
  const Manifest before = {{"model.safetensors", "o1", 10, "s1", 10}};
  const Manifest after = {{"model.safetensors", "o2", 10, "s2", 10}};
  const HeadersBySha256 headers = {{"s1", header("old.")}, {"s2", header("new.")}};
  const std::vector<Change> changes = DiffWeights(before, after, headers);
  ExpectBounded(changes);
  const json& tensors = changes[0].details["tensors"];
  EXPECT_EQ(tensors["added_count"], 200'000);
  EXPECT_EQ(tensors["removed_count"], 200'000);
  EXPECT_EQ(tensors["added"].size(), 50u);
  EXPECT_LE(tensors["added"][0]["name"].get<std::string>().size(), kMaxCappedStringBytes);
}

TEST(Bounds, HundredThousandFiles) {
  Manifest before, after;
  for (int i = 0; i < 100'000; ++i) {
    after.push_back({"data/" + std::to_string(i) + std::string(200, 'f') + ".txt",
                     "oid" + std::to_string(i), 1, std::nullopt, std::nullopt});
  }
  const std::vector<Change> changes = DiffFiles(before, after);
  ExpectBounded(changes);
  EXPECT_EQ(changes[0].details["added_count"], 100'000);
  EXPECT_EQ(changes[0].details["added"].size(), 200u);
}

TEST(Bounds, ThousandsOfNamedChatTemplatesAreAtMostSixteenChanges) {
  auto config = [](const std::string& body) {
    json list = json::array();
    for (int i = 0; i < 5'000; ++i) {
      list.push_back({{"name", "t" + std::to_string(i)}, {"template", body}});
    }
    return json{{"chat_template", list}}.dump();
  };
  size_t rendered = 0;
  ChatTemplateDiffOptions options;
  options.compare_rendered = [&](const TemplateRevisions&) -> std::optional<RenderedComparison> {
    ++rendered;
    return std::nullopt;
  };
  const std::vector<Change> changes = DiffChatTemplates(
      {.tokenizer_config = config("{{ a }}")}, {.tokenizer_config = config("{{ b }}")}, options);
  ASSERT_EQ(changes.size(), 16u);
  ExpectBounded(changes);
  EXPECT_LE(rendered, 16u);  // past the shown ones, no prompt is rendered
  EXPECT_EQ(changes.back().details["change_count"], 4'985);
  EXPECT_EQ(changes.back().summary.rfind("4985 more chat template changes: ", 0), 0u)
      << changes.back().summary;
}

TEST(Bounds, ThousandsOfCheckpointsAreAtMostThirtyTwoChanges) {
  Manifest after;
  for (int i = 0; i < 5'000; ++i) {
    after.push_back({"w" + std::to_string(i) + ".safetensors", "o" + std::to_string(i), 1, "s", 1});
  }
  const std::vector<Change> changes = DiffWeights({}, after, {});
  ASSERT_EQ(changes.size(), 32u);
  ExpectBounded(changes);
  EXPECT_EQ(changes.back().details["change_count"], 4'969);
  EXPECT_EQ(changes.back().path, "weights");
}

TEST(Bounds, CapJsonKeepsTheFirstMembersWithinTheBudget) {
  bool cut = false;
  EXPECT_EQ(CapJson(json{{"a", 1}, {"b", {1, 2}}}, 100, &cut), (json{{"a", 1}, {"b", {1, 2}}}));
  EXPECT_FALSE(cut);
  const json capped = CapJson(Ids(100'000), 64, &cut);
  EXPECT_TRUE(cut);
  EXPECT_LE(Bytes(capped), 64u + 16u);
  EXPECT_EQ(capped[0], 0);
  cut = false;
  const json text = CapJson(json(std::string(10'000, 'x')), 1 << 20, &cut);
  EXPECT_TRUE(cut);
  EXPECT_EQ(text.get<std::string>().size(), kMaxCappedStringBytes);
}

TEST(Bounds, BoundDetailsIsTheBackstop) {
  const json small = {{"file", "config.json"}, {"ops", Ids(10)}};
  EXPECT_EQ(BoundDetails(small), small);
  const json big = {{"file", "config.json"}, {"everything", Ids(1'000'000)}, {"status", "x"}};
  const json bounded = BoundDetails(big);
  EXPECT_LE(Bytes(bounded), kMaxDetailsBytes);
  EXPECT_EQ(bounded["file"], "config.json");
  EXPECT_EQ(bounded["status"], "x");
  EXPECT_EQ(bounded["truncated"]["left_out"], json({"everything"}));
  EXPECT_EQ(bounded["truncated"]["bytes"], Bytes(big));
  Change change;
  change.summary = std::string(10'000, 's');
  change.details = big;
  const Change c = BoundChange(change);
  EXPECT_LE(c.summary.size(), kMaxSummaryBytes);
  EXPECT_LE(Bytes(c.details), kMaxDetailsBytes);
}

TEST(Bounds, ErrorChangesAreBounded) {
  const Change c = ErrorChange(std::string(100'000, 'p'), std::string(1'000'000, 'm'));
  EXPECT_LE(c.summary.size(), kMaxSummaryBytes);
  EXPECT_LE(Bytes(c.details), 8u * 1024);
}

}  // namespace
}  // namespace hubwatch::diff
