#include "tracker/advisory/osv.h"

#include <gtest/gtest.h>

namespace hubwatch::advisory {
namespace {

const std::string kSha = "c4a54320a52ed5f88b7a2f84496903ea4ff07b45";
const std::string kParent = "1448453bdb895762499deb4176c1dd83b145fac1";

diff::Change ChatTemplateChange() {
  diff::Change c;
  c.kind = diff::ChangeKind::kChatTemplate;
  c.impact = diff::Impact::kBehavioral;
  c.path = "tokenizer_config.json";
  c.summary = "chat template changed: generation prompt now ends with <think>";
  c.details = {
      {"unified_diff", "@@ -1 +1 @@\n-{{'<|Assistant|>'}}\n+{{'<|Assistant|><think>\\n'}}\n"}};
  return c;
}

AdvisoryContext Context() {
  AdvisoryContext ctx;
  ctx.repo = "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B";
  ctx.revision = kSha;
  ctx.parent = kParent;
  ctx.introduced = "0";
  ctx.published = "2025-02-14T10:00:00Z";
  ctx.modified = "2025-02-14T10:05:00Z";
  return ctx;
}

TEST(Osv, IdsAreStableAndDistinct) {
  const std::string a = AdvisoryId("r/m", kSha, diff::ChangeKind::kConfig, "config.json", 0);
  EXPECT_EQ(a, AdvisoryId("r/m", kSha, diff::ChangeKind::kConfig, "config.json", 0));
  EXPECT_EQ(a.rfind("x_HUBWATCH-", 0), 0u);
  EXPECT_EQ(a.size(), std::string("x_HUBWATCH-").size() + 16);
  for (const std::string& other :
       {AdvisoryId("r/m2", kSha, diff::ChangeKind::kConfig, "config.json", 0),
        AdvisoryId("r/m", kParent, diff::ChangeKind::kConfig, "config.json", 0),
        AdvisoryId("r/m", kSha, diff::ChangeKind::kGenerationConfig, "config.json", 0),
        AdvisoryId("r/m", kSha, diff::ChangeKind::kConfig, "generation_config.json", 0),
        AdvisoryId("r/m", kSha, diff::ChangeKind::kConfig, "config.json", 1)}) {
    EXPECT_NE(a, other);
  }
}

TEST(Osv, RecordHasTheRangeReferencesAndDatabaseSpecificData) {
  const nlohmann::json osv = BuildOsv(ChatTemplateChange(), Context());
  EXPECT_EQ(osv["schema_version"], kOsvSchemaVersion);
  EXPECT_EQ(osv["summary"],
            "chat template changed: generation prompt now ends with <think> "
            "(DeepSeek-R1-Distill-Qwen-7B@c4a5432)");
  const nlohmann::json& range = osv["affected"][0]["ranges"][0];
  EXPECT_EQ(range["type"], "GIT");
  EXPECT_EQ(range["repo"], "https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B");
  EXPECT_EQ(range["events"][0]["introduced"], "0");
  EXPECT_EQ(range["events"][1]["fixed"], kSha);
  EXPECT_EQ(osv["references"][0]["url"],
            "https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B/commit/" + kSha);
  const nlohmann::json& db = osv["database_specific"];
  EXPECT_EQ(db["purl"], "pkg:huggingface/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B@" + kSha);
  EXPECT_EQ(db["kind"], "chat_template");
  EXPECT_EQ(db["impact"], "behavioral");
  EXPECT_EQ(db["parent"], kParent);
  EXPECT_EQ(db["diff"], ChatTemplateChange().details);
  const std::string details = osv["details"];
  EXPECT_NE(details.find("```diff\n@@ -1 +1 @@"), std::string::npos) << details;
  EXPECT_NE(details.find("impact: **behavioral**"), std::string::npos);
}

// The line a chat or pager message is built from: the key difference, what it means, where.
TEST(Osv, TheSummaryLeadsWithTheKeyDifferenceAndItsMeaning) {
  AdvisoryContext ctx = Context();
  ctx.repo = "meta-llama/Meta-Llama-3-8B-Instruct";
  diff::Change eos;
  eos.kind = diff::ChangeKind::kGenerationConfig;
  eos.impact = diff::Impact::kBehavioral;
  eos.path = "generation_config.json";
  eos.summary = "eos_token_id 128001 -> [128001, 128009]";
  EXPECT_EQ(AdvisorySummary(eos, ctx),
            "eos_token_id 128001 -> [128001, 128009]: generation may stop at other tokens "
            "(Meta-Llama-3-8B-Instruct@c4a5432)");
  // A breaking config change says so, whatever key leads.
  diff::Change shapes = eos;
  shapes.kind = diff::ChangeKind::kConfig;
  shapes.impact = diff::Impact::kBreaking;
  shapes.summary = "vocab_size 128256 -> 128257; +1 more";
  EXPECT_EQ(AdvisorySummary(shapes, ctx),
            "vocab_size 128256 -> 128257; +1 more: may no longer load as before "
            "(Meta-Llama-3-8B-Instruct@c4a5432)");
  // A long difference keeps the place: the meaning goes, then the difference is cut.
  eos.summary = "eos_token_id " + std::string(300, '7') + " -> 2";
  const std::string cut = AdvisorySummary(eos, ctx);
  EXPECT_EQ(cut.size(), 120u);
  EXPECT_EQ(cut.rfind("eos_token_id 777", 0), 0u) << cut;
  EXPECT_NE(cut.find("... (Meta-Llama-3-8B-Instruct@c4a5432)"), std::string::npos) << cut;
}

TEST(Osv, LongSummariesAreCutAndFencesCannotBeClosedEarly) {
  AdvisoryContext ctx = Context();
  ctx.repo = std::string(96, 'o') + "/" + std::string(96, 'm');
  diff::Change c = ChatTemplateChange();
  c.details = {{"unified_diff", "+```\n+# not a heading\n"}};
  const nlohmann::json osv = BuildOsv(c, ctx);
  EXPECT_LE(osv["summary"].get<std::string>().size(), 120u);
  const std::string details = osv["details"];
  EXPECT_NE(details.find("````diff"), std::string::npos) << details;
}

// A change whose details an engine did not bound (10 MB of ids) still gives a record of
// bounded size, and invalid UTF-8 in it is replaced, not thrown.
TEST(Osv, RecordsAreBoundedWhateverTheChangeHolds) {
  diff::Change c = ChatTemplateChange();
  c.summary = std::string(100'000, 's');
  nlohmann::json ids = nlohmann::json::array();
  for (int i = 0; i < 1'400'000; ++i) ids.push_back(i);
  c.details = {{"file", "config.json"}, {"ids", ids}, {"bad", "\xff\xfe"}};
  nlohmann::json osv;
  ASSERT_NO_THROW(osv = BuildOsv(c, Context()));
  const size_t bytes = osv.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size();
  EXPECT_LE(bytes, diff::kMaxDetailsBytes + 64 * 1024 + 8 * 1024);
  EXPECT_LE(osv["database_specific"]["change"].get<std::string>().size(), diff::kMaxSummaryBytes);
  EXPECT_EQ(osv["database_specific"]["diff"]["truncated"]["left_out"], nlohmann::json({"ids"}));
}

// details["rendered"] as the pipeline writes it: one conversation per entry.
nlohmann::json Rendered(int diffs, const std::string& diff_text) {
  nlohmann::json conversations = nlohmann::json::array();
  for (int i = 0; i < diffs; ++i) {
    const std::string name = "conv" + std::to_string(i);
    conversations.push_back(
        {{"conversation", name},
         {"changed", true},
         {"unified_diff", "--- before/" + name + "\n+++ after/" + name + "\n" + diff_text}});
  }
  conversations.push_back({{"conversation", "same"}, {"changed", false}});
  conversations.push_back({{"conversation", "broken"},
                           {"changed", true},
                           {"after_error", "raise_exception: roles must alternate"}});
  conversations.push_back({{"conversation", "fixed"},
                           {"changed", true},
                           {"before_error", "System role not supported"}});
  return {{"impact", "behavioral"}, {"changed", diffs + 2}, {"conversations", conversations}};
}

TEST(Osv, ChatTemplateDetailsShowTheRenderedPromptDiffs) {
  diff::Change c = ChatTemplateChange();
  c.details["rendered"] =
      Rendered(5, "@@ -1 +1 @@\n-<|User|>Hi<|Assistant|>\n+<|User|>Hi<|Assistant|><think>\n");
  const std::string details = BuildOsv(c, Context())["details"];
  // The template diff first, then the prompts.
  const size_t rendered =
      details.find("\nRendered prompts: 7 of 8 canonical conversations changed.\n");
  ASSERT_NE(rendered, std::string::npos) << details;
  EXPECT_LT(details.find("```diff\n@@ -1 +1 @@\n-{{'<|Assistant|>'}}"), rendered);
  EXPECT_NE(details.find("Conversation `conv0`:\n\n```diff\n--- before/conv0\n+++ after/conv0\n"
                         "@@ -1 +1 @@\n-<|User|>Hi<|Assistant|>\n+<|User|>Hi<|Assistant|><think>\n"
                         "```\n",
                         rendered),
            std::string::npos)
      << details;
  EXPECT_NE(details.find("Conversation `conv2`:"), std::string::npos);
  EXPECT_EQ(details.find("Conversation `conv3`:"), std::string::npos);  // at most three
  EXPECT_EQ(details.find("`same`"), std::string::npos);
  EXPECT_NE(details.find("2 more changed prompt diffs omitted"), std::string::npos) << details;
  EXPECT_NE(details.find("- conversation `broken`: no longer renders: raise_exception: roles"),
            std::string::npos);
  EXPECT_NE(details.find("- conversation `fixed`: renders now; before: System role not supported"),
            std::string::npos);
}

TEST(Osv, RenderedPromptDiffsAreCut) {
  // 100 changed lines, and one long line of multi-byte characters: the shown diff keeps 40
  // lines of at most 400 bytes and stays valid UTF-8.
  std::string diff_text = "@@ -1,100 +1,100 @@\n";
  for (int i = 0; i < 100; ++i) diff_text += "+line " + std::to_string(i) + "\n";
  std::string wide;
  for (int i = 0; i < 300; ++i) wide += "\xE2\x96\x81";  // U+2581, 3 bytes
  diff::Change c = ChatTemplateChange();
  c.details["rendered"] = Rendered(1, "@@ -1 +1 @@\n+" + wide + "\n" + diff_text);
  const nlohmann::json osv = BuildOsv(c, Context());
  EXPECT_NO_THROW(static_cast<void>(osv.dump()));
  const std::string details = osv["details"];
  EXPECT_NE(details.find("... (line cut)\n"), std::string::npos) << details;
  EXPECT_NE(details.find("+line 34\n"), std::string::npos);
  EXPECT_EQ(details.find("+line 35\n"), std::string::npos);
  EXPECT_NE(details.find("... (65 more lines)\n```"), std::string::npos) << details;
  EXPECT_LT(details.size(), 16u * 1024);
}

TEST(Osv, CosmeticTemplateEditSaysNoPromptChanged) {
  diff::Change c = ChatTemplateChange();
  c.impact = diff::Impact::kCosmetic;
  c.details["rendered"] = {{"changed", 0},
                           {"conversations", {{{"conversation", "a"}, {"changed", false}}}}};
  const std::string details = BuildOsv(c, Context())["details"];
  EXPECT_NE(details.find("Rendered prompts: 0 of 1 canonical conversations changed (the template "
                         "edit does not change any prompt)."),
            std::string::npos)
      << details;
  // Other kinds, and changes without a rendered comparison, have no such section.
  c.details.erase("rendered");
  EXPECT_EQ(BuildOsv(c, Context())["details"].get<std::string>().find("Rendered prompts"),
            std::string::npos);
}

TEST(Osv, Rfc3339IsUtcWithZ) {
  EXPECT_EQ(Rfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(Rfc3339(1733145155), "2024-12-02T13:12:35Z");
}

}  // namespace
}  // namespace hubwatch::advisory
