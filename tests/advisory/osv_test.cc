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
            "chat template changed in deepseek-ai/DeepSeek-R1-Distill-Qwen-7B at c4a5432");
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

TEST(Osv, Rfc3339IsUtcWithZ) {
  EXPECT_EQ(Rfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(Rfc3339(1733145155), "2024-12-02T13:12:35Z");
}

}  // namespace
}  // namespace hubwatch::advisory
