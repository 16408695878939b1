// config.json and generation_config.json diffs, on the shapes of the real incidents.

#include "tracker/diff/config_diff.h"

#include <gtest/gtest.h>

#include "tests/estimator/test_util.h"

namespace hubwatch::diff {
namespace {

using nlohmann::json;
using testing::ReadFixture;

std::string Edit(const std::string& text, const std::function<void(json&)>& edit) {
  json doc = json::parse(text);
  edit(doc);
  return doc.dump(2);
}

const std::string kLlama3 = ReadFixture("models/meta-llama__Meta-Llama-3-8B.config.json");

TEST(ConfigDiff, WhitespaceAndKeyOrderAloneAreNoChange) {
  const std::string reformatted = json::parse(kLlama3).dump();  // sorted keys, no whitespace
  ASSERT_NE(reformatted, kLlama3);
  EXPECT_TRUE(DiffConfig(kLlama3, reformatted).empty());
  EXPECT_TRUE(DiffConfig(kLlama3, kLlama3).empty());
  EXPECT_TRUE(DiffConfig(std::nullopt, std::nullopt).empty());
}

// F1: Meta-Llama-3-8B-Instruct config.json eos_token_id 128001 -> 128009.
TEST(ConfigDiff, Llama3EosTokenIdIsOneBehavioralChange) {
  const std::vector<Change> changes =
      DiffConfig(kLlama3, Edit(kLlama3, [](json& c) { c["eos_token_id"] = 128009; }));
  ASSERT_EQ(changes.size(), 1u);
  const Change& change = changes[0];
  EXPECT_EQ(change.kind, ChangeKind::kConfig);
  EXPECT_EQ(change.impact, Impact::kBehavioral);
  EXPECT_EQ(change.path, "config.json");
  EXPECT_EQ(change.summary, "eos_token_id 128001 -> 128009");
  ASSERT_EQ(change.details["ops"].size(), 1u);
  EXPECT_EQ(change.details["ops"][0],
            json::parse(R"({"op": "replace", "path": "/eos_token_id", "old_value": 128001,
                            "value": 128009, "impact": "behavioral"})"));
  EXPECT_EQ(change.details["status"], "modified");
}

// F1: generation_config.json eos_token_id 128001 -> [128001, 128009].
TEST(ConfigDiff, GenerationConfigEosBecomingAList) {
  const std::string before = R"({"bos_token_id": 128000, "eos_token_id": 128001,
                                 "transformers_version": "4.40.0.dev0"})";
  const std::string after = R"({"bos_token_id": 128000, "eos_token_id": [128001, 128009],
                                "transformers_version": "4.40.0.dev0"})";
  const std::vector<Change> changes = DiffGenerationConfig(before, after);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, ChangeKind::kGenerationConfig);
  EXPECT_EQ(changes[0].path, "generation_config.json");
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
  EXPECT_EQ(changes[0].summary, "eos_token_id 128001 -> [128001, 128009]");
}

// F3: Meta-Llama-3-8B -> Meta-Llama-3.1-8B-Instruct: rope_scaling arrives in the new schema.
TEST(ConfigDiff, Llama31RopeScalingInTheNewSchemaIsBreakingAndSaysSo) {
  const std::vector<Change> changes =
      DiffConfig(kLlama3, ReadFixture("diff/llama3.1-8b-instruct.config.json"));
  ASSERT_EQ(changes.size(), 1u);
  const Change& change = changes[0];
  EXPECT_EQ(change.impact, Impact::kBreaking);
  EXPECT_TRUE(change.summary.starts_with(
      "rope_scaling added in the \"rope_type\" schema (\"llama3\"); transformers releases that "
      "read only {\"type\", \"factor\"} refuse to load it"))
      << change.summary;
  ASSERT_EQ(change.details["schema_changes"].size(), 1u);
  EXPECT_EQ(change.details["schema_changes"][0]["rope_type"], "llama3");
  EXPECT_TRUE(change.details["schema_changes"][0]["from_schema"].is_null());
  // The other fields are there with their own impact.
  bool saw_max_pos = false;
  for (const json& op : change.details["ops"]) {
    if (op["path"] == "/max_position_embeddings") {
      saw_max_pos = true;
      EXPECT_EQ(op["old_value"], 8192);
      EXPECT_EQ(op["value"], 131072);
      EXPECT_EQ(op["impact"], "behavioral");
    }
    if (op["path"] == "/transformers_version") {
      EXPECT_EQ(op["impact"], "cosmetic");
    }
  }
  EXPECT_TRUE(saw_max_pos);
}

TEST(ConfigDiff, LegacyRopeTypeRenamedIsASchemaChange) {
  const std::string before = R"({"rope_scaling": {"type": "linear", "factor": 2.0}})";
  const std::string after = R"({"rope_scaling": {"rope_type": "linear", "factor": 2.0}})";
  const std::vector<Change> changes = DiffConfig(before, after);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kBreaking);
  EXPECT_TRUE(changes[0].summary.starts_with(
      "rope_scaling schema changed: legacy \"type\" \"linear\" -> \"rope_type\" \"linear\""))
      << changes[0].summary;
  // A factor change within the legacy schema is behavioral, no schema note.
  const std::vector<Change> factor =
      DiffConfig(before, R"({"rope_scaling": {"type": "linear", "factor": 4.0}})");
  ASSERT_EQ(factor.size(), 1u);
  EXPECT_EQ(factor[0].impact, Impact::kBehavioral);
  EXPECT_EQ(factor[0].summary, "rope_scaling.factor 2.0 -> 4.0");
  EXPECT_FALSE(factor[0].details.contains("schema_changes"));
}

TEST(ConfigDiff, ImpactByField) {
  EXPECT_EQ(ConfigFieldImpact("/hidden_size"), Impact::kBreaking);
  EXPECT_EQ(ConfigFieldImpact("/architectures/0"), Impact::kBreaking);
  EXPECT_EQ(ConfigFieldImpact("/text_config/num_hidden_layers"), Impact::kBreaking);
  EXPECT_EQ(ConfigFieldImpact("/num_local_experts"), Impact::kBreaking);
  EXPECT_EQ(ConfigFieldImpact("/tie_word_embeddings"), Impact::kBreaking);
  EXPECT_EQ(ConfigFieldImpact("/rope_theta"), Impact::kBehavioral);
  EXPECT_EQ(ConfigFieldImpact("/rope_scaling/factor"), Impact::kBehavioral);
  EXPECT_EQ(ConfigFieldImpact("/sliding_window"), Impact::kBehavioral);
  EXPECT_EQ(ConfigFieldImpact("/torch_dtype"), Impact::kBehavioral);
  EXPECT_EQ(ConfigFieldImpact("/temperature"), Impact::kBehavioral);
  EXPECT_EQ(ConfigFieldImpact("/some_new_field"), Impact::kBehavioral);
  EXPECT_EQ(ConfigFieldImpact("/transformers_version"), Impact::kCosmetic);
  EXPECT_EQ(ConfigFieldImpact("/_name_or_path"), Impact::kCosmetic);
  EXPECT_EQ(ConfigFieldImpact("/text_config/_name_or_path"), Impact::kCosmetic);
}

TEST(ConfigDiff, ImpactIsTheMostSevereOpAndTheSummaryLeadsWithIt) {
  const std::vector<Change> changes = DiffConfig(kLlama3, Edit(kLlama3, [](json& c) {
                                                   c["transformers_version"] = "4.41.0";
                                                   c["rope_theta"] = 1000000.0;
                                                   c["vocab_size"] = 128512;
                                                 }));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kBreaking);
  EXPECT_EQ(changes[0].summary,
            "vocab_size 128256 -> 128512; rope_theta 500000.0 -> 1000000.0; transformers_version "
            "\"4.40.0.dev0\" -> \"4.41.0\"");
  EXPECT_EQ(changes[0].details["ops"].size(), 3u);
}

TEST(ConfigDiff, CosmeticOnlyChange) {
  const std::vector<Change> changes =
      DiffConfig(kLlama3, Edit(kLlama3, [](json& c) { c["transformers_version"] = "4.44.0"; }));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kCosmetic);
}

TEST(ConfigDiff, SeveralOpsUnderOneKeyAreSummarizedAsTheKey) {
  const std::vector<Change> changes =
      DiffConfig(R"({"rope_scaling": {"a": 1, "b": 2}})", R"({"rope_scaling": {"a": 3, "b": 4}})");
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].summary, R"(rope_scaling {"a": 1, "b": 2} -> {"a": 3, "b": 4})");
  EXPECT_EQ(changes[0].details["ops"].size(), 2u);
}

TEST(ConfigDiff, WholeFileAddedOrRemoved) {
  std::vector<Change> changes = DiffConfig(std::nullopt, kLlama3);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
  EXPECT_EQ(changes[0].details["status"], "added");
  EXPECT_EQ(changes[0].summary, "file added");
  changes = DiffConfig(kLlama3, std::nullopt);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kBreaking);
  EXPECT_EQ(changes[0].details["status"], "removed");
  changes = DiffGenerationConfig(R"({"temperature": 0.6})", std::nullopt);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
  EXPECT_EQ(changes[0].details["ops"][0]["path"], "/temperature");
}

TEST(ConfigDiff, MalformedInputIsAnErrorChangeNamingTheFile) {
  std::vector<Change> changes = DiffConfig(kLlama3, R"({"hidden_size": 4096,)");
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, ChangeKind::kError);
  EXPECT_EQ(changes[0].impact, Impact::kBehavioral);
  EXPECT_EQ(changes[0].path, "config.json");
  EXPECT_TRUE(changes[0].summary.starts_with("config.json: invalid JSON")) << changes[0].summary;
  EXPECT_EQ(changes[0].details["file"], "config.json");

  changes = DiffConfig(kLlama3, "[1, 2]");
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, ChangeKind::kError);
  EXPECT_EQ(changes[0].summary, "config.json: not a JSON object (a JSON array)");

  // The same broken bytes again: nothing new to say.
  EXPECT_TRUE(DiffConfig("{oops", "{oops").empty());
  // Fixed in the next revision.
  changes = DiffConfig("{oops", kLlama3);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].kind, ChangeKind::kConfig);
  EXPECT_EQ(changes[0].details["status"], "fixed");
}

}  // namespace
}  // namespace hubwatch::diff
